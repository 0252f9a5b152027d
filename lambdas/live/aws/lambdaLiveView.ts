/**
 * The live view in the Lambda runner (docs/deploy.md, "Live view on AWS"): the Lambda has no
 * channel back to the service while it runs, so it looks at the run's watch marker every
 * WATCH_CHECK_MS (one HEAD through the event's presigned URL) and screencasts (LiveScreencast,
 * as the local worker does) only while the marker says someone watches; each frame, at most one
 * per AWS_FRAME_INTERVAL_MS (the newest one waiting), is POSTed over the run's one frame key. A
 * run nobody watches starts no screencast and uploads nothing. Every timer is stopped with the
 * run (`stop`): nothing of it runs on into the container's next invocation.
 */
import type { PageTarget } from "../../recording/pageTarget";
import type { ScreenFrame } from "../liveFrames";
import { LiveScreencast } from "../screencast";
import { AWS_FRAME_INTERVAL_MS, type LiveUploads, MAX_FRAME_METADATA_URL, WATCH_CHECK_MS, WATCH_FRESH_MS } from "./liveUploads";

/** The longest a look at the marker or a frame's upload may take. */
const REQUEST_TIMEOUT_MS = 5_000;

export interface LambdaLiveView {
  /** The runner's hook for each page the run opens (startInvocation's onPage). */
  pageOpened(page: PageTarget): Promise<void>;
  /** Stops looking and screencasting (the run is over); an upload under way finishes on its own. */
  stop(): void;
}

export function startLambdaLiveView(live: LiveUploads, options: { checkMs?: number; frameIntervalMs?: number } = {}): LambdaLiveView {
  const frameIntervalMs = options.frameIntervalMs ?? AWS_FRAME_INTERVAL_MS;
  let stopped = false;
  let watched = false;
  let waiting: ScreenFrame | undefined;
  let uploading = false;
  let lastUpload = Number.NEGATIVE_INFINITY;
  let uploadTimer: NodeJS.Timeout | undefined;
  const flush = () => {
    if (stopped || uploading || uploadTimer || !waiting) return;
    const wait = lastUpload + frameIntervalMs - Date.now();
    if (wait > 0) {
      uploadTimer = setTimeout(() => {
        uploadTimer = undefined;
        flush();
      }, wait);
      return;
    }
    const frame = waiting;
    waiting = undefined;
    uploading = true;
    lastUpload = Date.now();
    void uploadFrame(live, frame)
      .catch(() => undefined) // a lost frame: the next one replaces it
      .finally(() => {
        uploading = false;
        flush();
      });
  };
  const screencast = new LiveScreencast((frame) => {
    waiting = frame;
    flush();
  });
  let looking = false;
  const look = () => {
    if (looking || stopped) return;
    looking = true;
    void isWatched(live.watched_url)
      .then((now) => {
        if (stopped || now === watched) return;
        watched = now;
        if (!now) waiting = undefined;
        screencast.watch(now);
      })
      .finally(() => (looking = false));
  };
  look();
  const timer = setInterval(look, options.checkMs ?? WATCH_CHECK_MS);
  return {
    pageOpened: screencast.pageOpened,
    stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      clearTimeout(uploadTimer);
      waiting = undefined;
      if (watched) screencast.watch(false);
    },
  };
}

/** True while the marker exists and S3 wrote it within WATCH_FRESH_MS (S3's Date against its Last-Modified: one clock). */
async function isWatched(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { method: "HEAD", signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    if (!response.ok) return false;
    const written = Date.parse(response.headers.get("last-modified") ?? "");
    const now = Date.parse(response.headers.get("date") ?? "");
    return Number.isFinite(written) && Number.isFinite(now) && now - written <= WATCH_FRESH_MS;
  } catch {
    return false;
  }
}

/** POSTs the frame's JPEG through the frame form, with the page's URL and size as the object's metadata. */
async function uploadFrame(live: LiveUploads, frame: ScreenFrame): Promise<void> {
  const body = new FormData();
  for (const [field, value] of Object.entries(live.frame.fields)) body.append(field, value);
  body.append("Content-Type", "image/jpeg");
  // S3 metadata is ASCII: anything else in a URL (already percent-encoded by the browser) is replaced.
  body.append("x-amz-meta-url", frame.url.slice(0, MAX_FRAME_METADATA_URL).replace(/[^\x20-\x7e]/g, "?"));
  body.append("x-amz-meta-width", String(frame.width));
  body.append("x-amz-meta-height", String(frame.height));
  body.append("file", new Blob([Buffer.from(frame.data, "base64")], { type: "image/jpeg" }), "latest.jpg");
  const response = await fetch(live.frame.url, { method: "POST", body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  await response.arrayBuffer().catch(() => undefined);
}
