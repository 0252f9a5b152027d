/**
 * Frames of the live view (`GET /runs/{run_id}/live`): what the runner sends and the service
 * accepts. Free of imports: every bundle can take it.
 */

/** One frame: a JPEG of the page being driven, base64, with the page's URL and size (CSS pixels). */
export interface ScreenFrame {
  data: string;
  url: string;
  width: number;
  height: number;
  /** Where a watcher that reconnects resumes (its Last-Event-ID): on AWS, the frame's ETag in the bucket. */
  id?: string;
}

/** A frame's JPEG is at most this many bytes. */
export const MAX_FRAME_BYTES = 200 * 1024;
/** At most one frame per this many ms (5 per second). */
export const FRAME_INTERVAL_MS = 200;
/** The longest URL a frame carries (longer ones are cut). */
export const MAX_FRAME_URL = 2048;
/** A frame id (on AWS an S3 ETag without its quotes), as a watcher's Last-Event-ID may name one. */
export const FRAME_ID = /^[0-9A-Za-z-]{1,128}$/;
/** Base64 characters of a frame at most. */
export const MAX_FRAME_BASE64 = Math.ceil(MAX_FRAME_BYTES / 3) * 4;
