import { DeleteObjectsCommand, GetObjectCommand, HeadObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { createPresignedPost } from "@aws-sdk/s3-presigned-post";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { MAX_PROFILE_BYTES } from "../../../layers/runtime/sessionProfile";
import { httpStatusOf, isAwsError } from "../../runtime/aws/lambdaClient";

export { PROFILE_PREFIX, profileStateKey } from "./profileKeys";

/** A presigned POST form: the bucket's URL and every field but `file`. */
export interface PresignedForm {
  url: string;
  fields: Record<string, string>;
}

/**
 * Profiles' states in the run bucket, encrypted at rest with SSE-KMS under the stack's key
 * (`kmsKeyArn`): every upload form demands `x-amz-server-side-encryption: aws:kms` with that
 * exact key id, so S3 refuses a state sent without it. Runs never hold S3 or KMS permissions:
 * they get presigned URLs, which act with their signer's (a GET reads through S3's own call to
 * kms:Decrypt, a POST writes through its kms:GenerateDataKey).
 */
export interface ProfileObjects {
  /** A GET URL of the state at `key`, valid `expiresInSeconds`. */
  signGet(key: string, expiresInSeconds: number): Promise<string>;
  /** A POST form that writes exactly `key`, at most MAX_PROFILE_BYTES, SSE-KMS with the stack's key. */
  signPut(key: string, expiresInSeconds: number): Promise<PresignedForm>;
  /** The size S3 has for `key`; null when there is no object. */
  size(key: string): Promise<number | null>;
  /** The object's bytes, or null when there is none or it is over `maxBytes` (not read). */
  read(key: string, maxBytes: number): Promise<Uint8Array | null>;
  /** Deletes the objects (one DeleteObjects); missing ones are fine. */
  remove(keys: readonly string[]): Promise<void>;
}

/** Profiles' states on S3 (the client built as createRunBucketClient builds it: no checksum signed into presigned URLs). */
export function createS3ProfileObjects(s3: S3Client, bucket: string, kmsKeyArn: string): ProfileObjects {
  const missing = (error: unknown) => ["NoSuchKey", "NotFound", "AccessDenied"].some((name) => isAwsError(error, name)) || [403, 404].includes(httpStatusOf(error) ?? 0);
  return {
    signGet: (key, expiresInSeconds) => getSignedUrl(s3, new GetObjectCommand({ Bucket: bucket, Key: key }), { expiresIn: Math.ceil(expiresInSeconds) }),

    async signPut(key, expiresInSeconds) {
      const encryption = { "x-amz-server-side-encryption": "aws:kms", "x-amz-server-side-encryption-aws-kms-key-id": kmsKeyArn };
      const { url, fields } = await createPresignedPost(s3, {
        Bucket: bucket,
        Key: key,
        Conditions: [["content-length-range", 0, MAX_PROFILE_BYTES], ["starts-with", "$Content-Type", ""], ...Object.entries(encryption).map(([field, value]) => ({ [field]: value }))],
        Fields: encryption,
        Expires: Math.ceil(expiresInSeconds),
      });
      return { url, fields };
    },

    async size(key) {
      try {
        const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
        return Number(head.ContentLength ?? 0);
      } catch (error) {
        if (missing(error)) return null;
        throw error;
      }
    },

    async read(key, maxBytes) {
      let object;
      try {
        object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      } catch (error) {
        if (missing(error)) return null;
        throw error;
      }
      if (!object.Body || (object.ContentLength !== undefined && object.ContentLength > maxBytes)) {
        (object.Body as { destroy?: () => void } | undefined)?.destroy?.();
        return null;
      }
      const bytes = await object.Body.transformToByteArray();
      return bytes.byteLength > maxBytes ? null : bytes;
    },

    async remove(keys) {
      if (keys.length === 0) return;
      const answer = await s3.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true } }));
      const failed = answer.Errors ?? [];
      if (failed.length > 0) throw new Error(`S3 kept ${failed.length} profile state object(s): ${failed[0]?.Code ?? ""} ${failed[0]?.Message ?? ""}`.trim());
    },
  };
}
