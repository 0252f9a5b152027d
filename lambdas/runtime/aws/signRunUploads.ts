import { createHmac } from "node:crypto";
import type { S3Client } from "@aws-sdk/client-s3";
import { createPresignedPost } from "@aws-sdk/s3-presigned-post";
import { ARTIFACT_SLOT, type RunUploads, slotPolicy } from "../../runner/lambdaPackage";

/** What one run may upload: its outcome's key and cap, and its artifact slots' key prefix, count and cap each. */
export interface UploadLimits {
  outcomeKey: string;
  outcomeMaxBytes: number;
  slotPrefix: string;
  slots: number;
  slotMaxBytes: number;
  expiresInSeconds: number;
}

/**
 * Signs a run's uploads (RunUploads) with the client's credentials. The outcome's POST comes
 * from the SDK (createPresignedPost: the bucket's URL, the credential, the date and the session
 * token); each artifact slot's policy is the same conditions with its own exact key, signed here
 * the way S3 checks a POST (SigV4: the signing key of that date, region and `s3`, an HMAC of the
 * base64 policy), so the runner rebuilds each policy from one template.
 */
export async function signRunUploads(s3: S3Client, bucket: string, limits: UploadLimits): Promise<RunUploads> {
  const expires = Math.ceil(limits.expiresInSeconds);
  const outcome = await createPresignedPost(s3, {
    Bucket: bucket,
    Key: limits.outcomeKey,
    // The runner's form sends Content-Type (postToS3): S3 refuses a POST with a field no
    // condition names ("Extra input fields"), so the policy names it.
    Conditions: [["content-length-range", 0, limits.outcomeMaxBytes], ["starts-with", "$Content-Type", ""]],
    Expires: expires,
  });
  const { Policy: outcomePolicy, "X-Amz-Signature": outcomeSignature, key: _key, ...shared } = outcome.fields;
  if (!outcomePolicy || !outcomeSignature) throw new Error("the SDK's presigned POST has no policy or signature");
  const { expiration } = JSON.parse(Buffer.from(outcomePolicy, "base64").toString("utf8")) as { expiration: string };
  const credential = shared["X-Amz-Credential"] ?? "";
  const date = shared["X-Amz-Date"] ?? "";
  const token = shared["X-Amz-Security-Token"];
  const credentials = await s3.config.credentials();
  const [accessKeyId, day, region, service] = credential.split("/");
  if (accessKeyId !== credentials.accessKeyId || !day || !region || service !== "s3") throw new Error("the presigned POST's credential is not the client's");
  const conditions: unknown[] = [
    { bucket },
    ["eq", "$key", `${limits.slotPrefix}${ARTIFACT_SLOT}`],
    ["content-length-range", 0, limits.slotMaxBytes],
    ["starts-with", "$Content-Type", ""],
    { "X-Amz-Algorithm": "AWS4-HMAC-SHA256" },
    { "X-Amz-Credential": credential },
    { "X-Amz-Date": date },
    ...(token ? [{ "X-Amz-Security-Token": token }] : []),
  ];
  const template = JSON.stringify({ expiration, conditions });
  const signingKey = [day, region, "s3", "aws4_request"].reduce<Buffer>((key, part) => hmac(key, part), Buffer.from(`AWS4${credentials.secretAccessKey}`, "utf8"));
  const signatures = Array.from({ length: limits.slots }, (_, slot) => hmac(signingKey, slotPolicy(template, slot)).toString("hex"));
  return {
    url: outcome.url,
    fields: shared,
    outcome: { key: limits.outcomeKey, policy: outcomePolicy, signature: outcomeSignature },
    artifacts: { key_prefix: limits.slotPrefix, policy_template: template, signatures },
  };
}

function hmac(key: Buffer, data: string): Buffer {
  return createHmac("sha256", key).update(data, "utf8").digest();
}
