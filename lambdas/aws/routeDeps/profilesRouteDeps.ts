import type { Deps } from "../../deps";
import { createS3ProfileObjects } from "../../profiles/aws/profileObjects";
import { s3ProfileRemoval } from "../../profiles/aws/s3ProfileRemoval";
import { type AwsConfig, readAwsEnv } from "../awsConfig";
import { createRunBucketClient } from "../awsDeps";
import { createRouteBase } from "./routeBase";

/** The `profiles` routes (lib/routeRoles.ts): the table and S3 (a profile's state object goes with its record). */
export function createProfilesRouteDeps(config: AwsConfig): Deps {
  const base = createRouteBase(config, "profiles routes'");
  const objects = createS3ProfileObjects(createRunBucketClient(config.region), config.runtime.runBucket, config.secretsKeyArn);
  return { ...base, profileBlobs: s3ProfileRemoval(base.store.profileStates, objects) };
}

export const profilesRouteDeps = (): Deps => createProfilesRouteDeps(readAwsEnv(process.env));
