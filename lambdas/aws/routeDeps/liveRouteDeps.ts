import type { Deps } from "../../deps";
import { createS3LiveWatch } from "../../live/aws/s3LiveWatch";
import { type AwsConfig, readAwsEnv } from "../awsConfig";
import { createRunBucketClient } from "../awsDeps";
import { createRouteBase } from "./routeBase";

/** The `live` routes (lib/routeRoles.ts): the table and S3 (a run's watch marker and latest frame, read once a second). */
export function createLiveRouteDeps(config: AwsConfig): Deps {
  const base = createRouteBase(config, "live routes'");
  const watchFrames = createS3LiveWatch(createRunBucketClient(config.region), config.runtime.runBucket, { pollMs: 1_000, log: base.log });
  return { ...base, runtime: { ...base.runtime, watchFrames } };
}

export const liveRouteDeps = (): Deps => createLiveRouteDeps(readAwsEnv(process.env));
