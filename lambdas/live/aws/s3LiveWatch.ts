/**
 * The live view on AWS, the watcher's side (Runtime.watchFrames of the AWS runtime; docs/deploy.md,
 * "Live view on AWS"): the route Lambda writes the run's watch marker (and writes it again every
 * WATCH_REFRESH_MS while it watches), which makes the run's Lambda screencast, and reads the
 * run's latest frame from the bucket every `pollMs` (a GET with If-None-Match on the last ETag:
 * a frame not new is not read again). The frame was written by a run, so it is untrusted: read
 * only up to MAX_FRAME_BYTES, kept only when it is a JPEG, its metadata parsed and capped. Each
 * frame's id is its ETag, so a watcher that reconnects (Last-Event-ID) is not sent it again.
 */
import { GetObjectCommand, PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { httpStatusOf, isAwsError } from "../../runtime/aws/lambdaClient";
import type { LiveFrames, Runtime } from "../../runtime/runtime";
import { FRAME_ID, MAX_FRAME_BYTES, MAX_FRAME_URL, type ScreenFrame } from "../liveFrames";
import { liveFrameKey, liveWatchKey, WATCH_REFRESH_MS } from "./liveUploads";

/** The S3 calls the watcher makes (an S3Client; a test may watch them). */
export type LiveWatchS3 = Pick<S3Client, "send">;

/** The largest side a frame may claim (CSS pixels). */
const MAX_SIDE = 16_384;

export interface LiveWatchOptions {
  /** How often the latest frame is read (at most one frame per this many ms reaches a watcher). */
  pollMs: number;
  /** How often the marker is written again while someone watches (default WATCH_REFRESH_MS). */
  refreshMs?: number;
  log?: (line: string) => void;
}

export function createS3LiveWatch(s3: LiveWatchS3, bucket: string, options: LiveWatchOptions): NonNullable<Runtime["watchFrames"]> {
  const refreshMs = options.refreshMs ?? WATCH_REFRESH_MS;
  return (runId: string, onFrame: (frame: ScreenFrame) => void, _onEnd: () => void, after?: string): LiveFrames => {
    let closed = false;
    let etag = after !== undefined && FRAME_ID.test(after) ? `"${after}"` : undefined;
    let marked = Number.NEGATIVE_INFINITY;
    let timer: NodeJS.Timeout | undefined;
    const round = async () => {
      if (Date.now() - marked >= refreshMs) {
        marked = Date.now();
        await s3
          .send(new PutObjectCommand({ Bucket: bucket, Key: liveWatchKey(runId), Body: "watched", ContentType: "text/plain" }))
          .catch((error: unknown) => options.log?.(`live view: the watch marker of ${runId} was not written: ${(error as Error).message}`));
      }
      if (closed) return;
      const read = await readFrame(s3, bucket, runId, etag).catch(() => undefined);
      if (closed || !read) return;
      etag = read.etag;
      if (read.frame) onFrame(read.frame);
    };
    const next = () => {
      void round().finally(() => {
        if (!closed) timer = setTimeout(next, options.pollMs);
      });
    };
    next();
    return {
      close() {
        closed = true;
        clearTimeout(timer);
      },
    };
  };
}

/** The run's latest frame when it is not `etag`: its ETag, and the frame when it passes the checks (undefined: none new). */
async function readFrame(s3: LiveWatchS3, bucket: string, runId: string, etag: string | undefined): Promise<{ etag: string | undefined; frame: ScreenFrame | undefined } | undefined> {
  let object;
  try {
    object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: liveFrameKey(runId), ...(etag ? { IfNoneMatch: etag } : {}) }));
  } catch (error) {
    // 304: not new; 403/404: no frame yet (without s3:ListBucket a missing key is 403).
    if ([304, 403, 404].includes(httpStatusOf(error) ?? 0) || isAwsError(error, "NoSuchKey") || isAwsError(error, "NotModified")) return undefined;
    throw error;
  }
  const body = object.Body;
  if (!body) return undefined;
  const tag = object.ETag;
  if (object.ContentLength === undefined || object.ContentLength > MAX_FRAME_BYTES) {
    (body as { destroy?: () => void }).destroy?.();
    return { etag: tag, frame: undefined };
  }
  const bytes = await body.transformToByteArray();
  const frame = frameOf(bytes, object.Metadata ?? {}, tag);
  return { etag: tag, frame };
}

/** A frame from what a run uploaded: a JPEG of at most MAX_FRAME_BYTES, its metadata parsed field by field. */
export function frameOf(bytes: Uint8Array, metadata: Record<string, string>, etag: string | undefined): ScreenFrame | undefined {
  // A JPEG starts with its SOI marker and a segment marker: FF D8 FF.
  if (bytes.byteLength > MAX_FRAME_BYTES || bytes.byteLength < 4 || bytes[0] !== 0xff || bytes[1] !== 0xd8 || bytes[2] !== 0xff) return undefined;
  const side = (text: string | undefined) => (text !== undefined && /^[0-9]{1,5}$/.test(text) && Number(text) >= 1 && Number(text) <= MAX_SIDE ? Number(text) : undefined);
  const width = side(metadata.width);
  const height = side(metadata.height);
  if (width === undefined || height === undefined) return undefined;
  const url = typeof metadata.url === "string" ? metadata.url.slice(0, MAX_FRAME_URL) : "";
  const id = etag?.replace(/^"|"$/g, "");
  return { data: Buffer.from(bytes).toString("base64"), url, width, height, ...(id !== undefined && FRAME_ID.test(id) ? { id } : {}) };
}
