import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { createPresignedPost } from "@aws-sdk/s3-presigned-post";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { MAX_ARTIFACT_BYTES_PER_RUN } from "../../artifacts/artifacts";
import { httpStatusOf, isAwsError } from "./lambdaClient";

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
  /**
   * A presigned POST that lets its holder upload files under `artifacts/<run_id>/` only, each at
   * most the run's artifact bytes, until it expires (the runner's `artifacts.save`).
   */
  artifactUpload(runId: string, expiresInSeconds: number): Promise<ArtifactUpload>;
  /** An uploaded artifact's size and type as S3 has them; null when there is none. */
  artifactHead(runId: string, name: string): Promise<{ bytes: number; contentType: string | null } | null>;
  /** A short-lived URL that downloads the artifact as an attachment of its type. */
  artifactDownloadUrl(runId: string, name: string, contentType: string): Promise<string>;
  /** Deletes an uploaded artifact the run may not keep (none there: nothing happens). */
  deleteArtifact(runId: string, name: string): Promise<void>;
}

/** What the runner needs to upload a run's artifacts: POST a form of `fields`, `key`, `Content-Type` and `file` to `url`. */
export interface ArtifactUpload {
  url: string;
  fields: Record<string, string>;
  /** The key of an artifact: this prefix and its name. */
  keyPrefix: string;
}

/** Where a run's artifacts are kept in the bucket. */
export const ARTIFACT_PREFIX = "artifacts/";
export const artifactKey = (runId: string, name: string) => `${ARTIFACT_PREFIX}${runId}/${name}`;
/** How long a download URL the API redirects to works. */
const DOWNLOAD_URL_SECONDS = 300;

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
        if (isMissingObject(error)) return null;
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

    async artifactUpload(runId, expiresInSeconds) {
      const keyPrefix = `${ARTIFACT_PREFIX}${runId}/`;
      const post = await createPresignedPost(s3, {
        Bucket: bucket,
        Key: `${keyPrefix}\${filename}`,
        Conditions: [
          ["starts-with", "$key", keyPrefix],
          ["starts-with", "$Content-Type", ""],
          ["content-length-range", 0, MAX_ARTIFACT_BYTES_PER_RUN],
        ],
        Expires: Math.ceil(expiresInSeconds),
      });
      const fields = { ...post.fields };
      delete fields.key; // the runner names each file
      return { url: post.url, fields, keyPrefix };
    },

    async deleteArtifact(runId, name) {
      await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: artifactKey(runId, name) }));
    },

    async artifactHead(runId, name) {
      try {
        const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: artifactKey(runId, name) }));
        return { bytes: Number(head.ContentLength ?? 0), contentType: head.ContentType ?? null };
      } catch (error) {
        if (isMissingObject(error)) return null;
        throw error;
      }
    },

    artifactDownloadUrl: (runId, name, contentType) =>
      getSignedUrl(
        s3,
        new GetObjectCommand({
          Bucket: bucket,
          Key: artifactKey(runId, name),
          ResponseContentType: contentType,
          ResponseContentDisposition: `attachment; filename="${name}"`,
        }),
        { expiresIn: DOWNLOAD_URL_SECONDS },
      ),
  };
}

/**
 * An object that is not there. Without s3:ListBucket (the recorder has none), S3 answers a
 * missing key with 403 AccessDenied, not 404.
 */
function isMissingObject(error: unknown): boolean {
  const status = httpStatusOf(error);
  return ["NoSuchKey", "NotFound", "AccessDenied"].some((name) => isAwsError(error, name)) || status === 403 || status === 404;
}
