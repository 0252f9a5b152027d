import type { ProfileBlobs } from "../profileBlobs";
import type { ProfileObjects } from "./profileObjects";
import type { ProfileStateRecords } from "./profileStateRecords";

/**
 * DELETE /profiles/{name} on AWS: the S3 object of the profile's current state (its record
 * points at it), deleted before the record goes. Saves not adopted are never left behind by a
 * run (the recorder or the sweeper deletes them), and replaced states are deleted when replaced.
 */
export function s3ProfileRemoval(records: Pick<ProfileStateRecords, "stateKey">, objects: Pick<ProfileObjects, "remove">): Pick<ProfileBlobs, "remove"> {
  return {
    async remove(accountId, name) {
      const key = await records.stateKey(accountId, name);
      if (key) await objects.remove([key]);
    },
  };
}
