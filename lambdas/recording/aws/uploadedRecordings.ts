import { GetObjectCommand, PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { httpStatusOf, isAwsError } from "../../runtime/aws/lambdaClient";
import { artifactKey, slotKey } from "../../runtime/aws/outcomeBucket";

/**
 * The recordings a function's Lambda uploaded (`recording-<n>.json` in an artifact slot of the
 * run's uploads, outcomeBucket.ts), as the run recorder re-checks them: it reads a slot's text
 * (at most `maxBytes`, never more) and writes the checked recording as the run's artifact,
 * where downloads find it (instead of copying the slot as it came).
 */
export interface UploadedRecordings {
  /** The slot's bytes; `tooLarge` past `maxBytes` (not read); null when the slot holds nothing. */
  readSlot(runId: string, slot: number, maxBytes: number, attempt?: number): Promise<{ bytes: Uint8Array } | { tooLarge: number } | null>;
  /** Writes `data` (a checked recording, JSON) as the run's artifact `name`. */
  putArtifact(runId: string, name: string, data: Uint8Array): Promise<void>;
}

/** The S3 calls the recordings need (an S3Client; a test may watch them). */
export type RecordingsS3 = Pick<S3Client, "send">;

/** The uploaded recordings in the run bucket `bucket` (the recorder's role: GetObject on outcomes/, PutObject on artifacts/). */
export function createS3UploadedRecordings(s3: RecordingsS3, bucket: string): UploadedRecordings {
  return {
    async readSlot(runId, slot, maxBytes, attempt = 1) {
      let object;
      try {
        object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: slotKey(runId, slot, attempt) }));
      } catch (error) {
        // Without s3:ListBucket a missing key answers 403.
        if (["NoSuchKey", "NotFound", "AccessDenied"].some((name) => isAwsError(error, name)) || [403, 404].includes(httpStatusOf(error) ?? 0)) return null;
        throw error;
      }
      const body = object.Body;
      if (!body) return null;
      if (object.ContentLength !== undefined && object.ContentLength > maxBytes) {
        (body as { destroy?: () => void }).destroy?.();
        return { tooLarge: object.ContentLength };
      }
      const bytes = await body.transformToByteArray();
      return bytes.byteLength > maxBytes ? { tooLarge: bytes.byteLength } : { bytes };
    },

    async putArtifact(runId, name, data) {
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: artifactKey(runId, name), Body: data, ContentType: "application/json" }));
    },
  };
}
