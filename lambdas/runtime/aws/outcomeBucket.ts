import { GetObjectCommand, PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { isAwsError } from "./lambdaClient";

/**
 * Where a function's Lambda hands over an outcome too big for the run workflow's state
 * (INLINE_ANSWER_BYTES): one object per run, written through a presigned PUT URL the trusted
 * side puts in the run's event (the function's role holds no S3 permission), read back by the
 * recorder. The bucket's lifecycle expires these objects (lib/runPipeline.ts).
 */
export interface OutcomeBucket {
  /** A URL that lets its holder PUT this run's outcome object, and nothing else, until it expires. */
  uploadUrl(runId: string, expiresInSeconds: number): Promise<string>;
  /** The run's uploaded outcome as text, `too_large` past `maxBytes` (not read), null when there is none. */
  read(runId: string, maxBytes: number): Promise<{ text: string } | { tooLarge: number } | null>;
}

/** Where every run's uploaded outcome is kept (the bucket's lifecycle expires them). */
export const OUTCOME_PREFIX = "outcomes/";

/** The object key of a run's uploaded outcome. */
export const outcomeKey = (runId: string) => `${OUTCOME_PREFIX}${runId}.json`;

/**
 * The outcome bucket on S3. The client must be built with `requestChecksumCalculation:
 * "WHEN_REQUIRED"`: otherwise the SDK signs a checksum of the empty body into presigned PUT
 * URLs, and S3 refuses every real upload through them.
 */
export function createS3OutcomeBucket(s3: S3Client, bucket: string): OutcomeBucket {
  return {
    uploadUrl: (runId, expiresInSeconds) =>
      getSignedUrl(s3, new PutObjectCommand({ Bucket: bucket, Key: outcomeKey(runId) }), { expiresIn: Math.ceil(expiresInSeconds) }),

    async read(runId, maxBytes) {
      let object;
      try {
        object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: outcomeKey(runId) }));
      } catch (error) {
        // Without s3:ListBucket (the recorder has none), S3 answers a missing key with 403, not 404.
        const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
        if (isAwsError(error, "NoSuchKey") || isAwsError(error, "NotFound") || isAwsError(error, "AccessDenied") || status === 403 || status === 404) return null;
        throw error;
      }
      const body = object.Body;
      if (!body) return null;
      if (object.ContentLength !== undefined && object.ContentLength > maxBytes) {
        (body as { destroy?: () => void }).destroy?.(); // not read: its holder may have uploaded gigabytes
        return { tooLarge: object.ContentLength };
      }
      const bytes = await body.transformToByteArray();
      if (bytes.byteLength > maxBytes) return { tooLarge: bytes.byteLength };
      return { text: new TextDecoder().decode(bytes) };
    },
  };
}
