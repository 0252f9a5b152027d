import { CopyObjectCommand, DeleteObjectsCommand, GetObjectCommand, HeadObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { MAX_ARTIFACT_BYTES_PER_RUN, MAX_ARTIFACTS_PER_RUN } from "../../artifacts/artifacts";
import type { RunUploads } from "../../runner/lambdaPackage";
import { MAX_FRAME_BYTES } from "../../runner/protocol";
import { signRunUploads } from "./signRunUploads";
import { signLiveUploads } from "../../live/aws/signLiveUploads";
import { httpStatusOf, isAwsError } from "./lambdaClient";

/**
 * Where a function's Lambda hands over what it writes: its outcome when too big for the run
 * workflow's state (INLINE_ANSWER_BYTES) and its artifacts, through presigned POSTs the trusted
 * side puts in the run's event (the function's role holds no S3 permission). Everything a run
 * can write is under its own prefix `outcomes/<run_id>/`, each object an exact key with a size
 * cap: one outcome and MAX_ARTIFACTS_PER_RUN artifact slots. The recorder reads the outcome,
 * copies each artifact it keeps to `artifacts/<run_id>/<name>` (where downloads find it), and
 * then deletes the whole prefix (sweepUploads), reported or not. The bucket's lifecycle expires
 * anything left (lib/runPipeline.ts).
 */
export interface OutcomeBucket {
  /** The presigned POSTs of the run's uploads (RunUploads), valid for `expiresInSeconds`. */
  uploads(runId: string, expiresInSeconds: number, attempt?: number): Promise<RunUploads>;
  /** The run's uploaded outcome as text, `too_large` past `maxBytes` (not read), null when there is none. */
  read(runId: string, maxBytes: number, attempt?: number): Promise<{ text: string } | { tooLarge: number } | null>;
  /** What the run uploaded to artifact slot `slot`: its size and type as S3 has them; null when nothing. */
  slotHead(runId: string, slot: number, attempt?: number): Promise<{ bytes: number; contentType: string | null } | null>;
  /** Copies artifact slot `slot` to the artifact `name` of the run (CopyObject, within the bucket). */
  keepArtifact(runId: string, slot: number, name: string, attempt?: number): Promise<void>;
  /** Deletes every object the run could write (its outcome and all its slots), in one DeleteObjects. */
  sweepUploads(runId: string, attempt?: number): Promise<void>;
  /** A short-lived URL that downloads the artifact as an attachment of its type. */
  artifactDownloadUrl(runId: string, name: string, contentType: string): Promise<string>;
}

/** Where a run's artifacts are kept in the bucket. */
export const ARTIFACT_PREFIX = "artifacts/";
export const artifactKey = (runId: string, name: string) => `${ARTIFACT_PREFIX}${runId}/${name}`;
/** How long a download URL the API redirects to works. */
const DOWNLOAD_URL_SECONDS = 300;

/** Where every run's uploads are kept until its end (the bucket's lifecycle expires what is left). */
export const OUTCOME_PREFIX = "outcomes/";

/**
 * The prefix of everything attempt `attempt` of run `runId` can write: a prefix per attempt (as
 * its execution is named, runExecutions.executionName), so that sweeping an attempt's uploads
 * never removes what the next attempt, started meanwhile, uploaded.
 */
export const runUploadPrefix = (runId: string, attempt = 1) => `${OUTCOME_PREFIX}${attempt > 1 ? `${runId}-attempt-${attempt}` : runId}/`;
/** The object key of a run's uploaded outcome. */
export const outcomeKey = (runId: string, attempt = 1) => `${runUploadPrefix(runId, attempt)}outcome.json`;
/** The object key of a run's artifact slot. */
export const slotKey = (runId: string, slot: number, attempt = 1) => `${runUploadPrefix(runId, attempt)}artifact-${slot}`;
/** The largest outcome a run may upload: what the recorder reads at most. */
export const MAX_UPLOADED_OUTCOME_BYTES = MAX_FRAME_BYTES;

/**
 * The outcome bucket on S3. The client must be built with `requestChecksumCalculation:
 * "WHEN_REQUIRED"`: otherwise the SDK signs a checksum of the empty body into presigned URLs.
 */
export function createS3OutcomeBucket(s3: S3Client, bucket: string): OutcomeBucket {
  return {
    async uploads(runId, expiresInSeconds, attempt = 1) {
      const [uploads, live] = await Promise.all([
        signRunUploads(s3, bucket, {
          outcomeKey: outcomeKey(runId, attempt),
          outcomeMaxBytes: MAX_UPLOADED_OUTCOME_BYTES,
          slotPrefix: `${runUploadPrefix(runId, attempt)}artifact-`,
          slots: MAX_ARTIFACTS_PER_RUN,
          slotMaxBytes: MAX_ARTIFACT_BYTES_PER_RUN,
          expiresInSeconds,
        }),
        // The live view's frame POST and watch-marker HEAD (lambdas/live/aws).
        signLiveUploads(s3, bucket, runId, expiresInSeconds),
      ]);
      uploads.live = live;
      return uploads;
    },

    async read(runId, maxBytes, attempt = 1) {
      let object;
      try {
        object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: outcomeKey(runId, attempt) }));
      } catch (error) {
        if (isMissingObject(error)) return null;
        throw error;
      }
      const body = object.Body;
      if (!body) return null;
      if (object.ContentLength !== undefined && object.ContentLength > maxBytes) {
        (body as { destroy?: () => void }).destroy?.(); // not read: its holder may have uploaded more than the policy allows elsewhere
        return { tooLarge: object.ContentLength };
      }
      const bytes = await body.transformToByteArray();
      if (bytes.byteLength > maxBytes) return { tooLarge: bytes.byteLength };
      return { text: new TextDecoder().decode(bytes) };
    },

    async slotHead(runId, slot, attempt = 1) {
      try {
        const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: slotKey(runId, slot, attempt) }));
        return { bytes: Number(head.ContentLength ?? 0), contentType: head.ContentType ?? null };
      } catch (error) {
        if (isMissingObject(error)) return null;
        throw error;
      }
    },

    async keepArtifact(runId, slot, name, attempt = 1) {
      await s3.send(new CopyObjectCommand({ Bucket: bucket, Key: artifactKey(runId, name), CopySource: `${bucket}/${slotKey(runId, slot, attempt)}` }));
    },

    async sweepUploads(runId, attempt = 1) {
      const keys = [outcomeKey(runId, attempt), ...Array.from({ length: MAX_ARTIFACTS_PER_RUN }, (_, slot) => slotKey(runId, slot, attempt))];
      const answer = await s3.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true } }));
      const failed = answer.Errors ?? [];
      if (failed.length > 0) throw new Error(`S3 kept ${failed.length} of the run's uploads: ${failed[0]?.Code ?? ""} ${failed[0]?.Message ?? ""}`.trim());
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
