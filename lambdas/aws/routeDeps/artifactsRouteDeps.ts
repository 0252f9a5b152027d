import type { Deps } from "../../deps";
import { createS3OutcomeBucket } from "../../runtime/aws/outcomeBucket";
import { type AwsConfig, readAwsEnv } from "../awsConfig";
import { createRunBucketClient } from "../awsDeps";
import { createRouteBase } from "./routeBase";

/** The `artifacts` routes (lib/routeRoles.ts): the table and S3 (presigned downloads). */
export function createArtifactsRouteDeps(config: AwsConfig): Deps {
  const bucket = createS3OutcomeBucket(createRunBucketClient(config.region), config.runtime.runBucket);
  return {
    ...createRouteBase(config, "artifacts routes'"),
    // Downloads are short-lived presigned URLs the API redirects to: the bytes never pass through a Lambda.
    artifactContent: { open: async (item) => ({ redirect: await bucket.artifactDownloadUrl(item.run_id, item.name, item.content_type) }) },
  };
}

export const artifactsRouteDeps = (): Deps => createArtifactsRouteDeps(readAwsEnv(process.env));
