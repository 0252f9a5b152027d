import { ProfileError, ProfileLockedError } from "../../layers/runtime/profileErrors";
import type { ProfileChannel } from "../../layers/runtime/runContext";
import { MAX_PROFILE_BYTES } from "../../layers/runtime/sessionProfile";
import type { RunProfileGrant } from "./lambdaPackage";
import { postToS3 } from "./s3Artifacts";

/** One read or write of a profile's state may take this long at most. */
const TRANSFER_TIMEOUT_MS = 60_000;

const notAllowed = (name: string) =>
  `This function may not open the profile '${name}': its code does not pass that name literally to Session.start({ profile }), and its \`profiles\` setting does not list it (set it: PATCH /functions/{ref} with {"profiles": ["${name}"]})`;

/**
 * The Lambda runner's profiles (AWS): the event's grants, decided by the trusted side before the
 * run started. `open` reads the current state through its presigned GET (capped at 50 MB);
 * `save` POSTs the new state to the run's own object for it (a new key: the recorder adopts it
 * if the run succeeds), or, over the cap, uploads nothing and remembers the name, which the
 * answer reports (`tooLarge()`) so that the recorder fails the run with profile_too_large.
 */
export function s3Profiles(grants: readonly RunProfileGrant[]): ProfileChannel & { tooLarge(): string[] } {
  const byName = new Map(grants.map((grant) => [grant.name, grant]));
  const over = new Set<string>();
  return {
    tooLarge: () => [...over],

    async open(name, persist) {
      const grant = byName.get(name);
      if (!grant) throw new ProfileError(notAllowed(name), "profile_not_allowed");
      if (persist && !grant.put) {
        if (grant.locked) throw new ProfileLockedError(`The profile '${name}' is in use by another writer (a persist: true session of another run): on AWS its writer's lease is taken before a run starts, and another run held it`);
        throw new ProfileError(`The profile '${name}' cannot be saved by this run: on AWS only names this function's code passes literally with persist, or lists in its \`profiles\` setting, are leased for writing before the run starts`, "profile_not_allowed");
      }
      if (!grant.get) return new Uint8Array();
      let response: Response;
      try {
        response = await fetch(grant.get, { signal: AbortSignal.timeout(TRANSFER_TIMEOUT_MS) });
      } catch (error) {
        throw new ProfileError(`The profile '${name}' could not be read: ${(error as Error).message}`, "profile_unavailable");
      }
      if (!response.ok) {
        await response.body?.cancel().catch(() => undefined);
        throw new ProfileError(`The profile '${name}' could not be read (HTTP ${response.status}): another run may have replaced its state since this run started; run it again`, "profile_unavailable");
      }
      const length = Number(response.headers.get("content-length"));
      if (Number.isFinite(length) && length > MAX_PROFILE_BYTES) {
        await response.body?.cancel().catch(() => undefined);
        throw new ProfileError(`The profile '${name}' is over its size cap`, "profile_unavailable");
      }
      const bytes = new Uint8Array(await response.arrayBuffer());
      if (bytes.byteLength > MAX_PROFILE_BYTES) throw new ProfileError(`The profile '${name}' is over its size cap`, "profile_unavailable");
      return bytes;
    },

    async save(name, state) {
      const put = byName.get(name)?.put;
      // Only a writer's profile is saved (open refused a persist session without a form).
      if (!put) return;
      if (state.byteLength > MAX_PROFILE_BYTES) {
        over.add(name);
        throw new Error(`The profile '${name}' would hold ${state.byteLength} bytes; a profile holds at most ${MAX_PROFILE_BYTES} (50 MB): its previous state is kept`);
      }
      const { key, Policy, "X-Amz-Signature": signature, ...fields } = put.fields;
      const response = await postToS3(
        { url: put.url, fields },
        { key: key ?? "", policy: Policy ?? "", signature: signature ?? "", contentType: "application/json", data: state, fileName: `${name}.json` },
        TRANSFER_TIMEOUT_MS,
      );
      if (!response.ok) {
        const detail = (await response.text().catch(() => "")).slice(0, 300);
        throw new Error(`The profile '${name}' could not be saved (HTTP ${response.status}${detail ? `: ${detail}` : ""})`);
      }
    },
  };
}
