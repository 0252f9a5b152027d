/**
 * The live view on AWS (docs/deploy.md, "Live view on AWS"): what the trusted side hands a run's
 * Lambda in its event (`uploads.live`), and where the frames and the watch marker are kept in
 * the run bucket. Free of imports: the runner's bundle takes it.
 *
 * - `frame`: a presigned POST for exactly `live/<run_id>/latest.jpg`, Content-Type image/jpeg,
 *   at most MAX_FRAME_BYTES, with the page's URL and size as user metadata: each frame replaces
 *   the last, so S3 holds only the latest.
 * - `watched_url`: a presigned HEAD of `live/<run_id>/watch`, the marker a watcher's route Lambda
 *   writes (and rewrites every WATCH_REFRESH_MS while it watches). The run is watched while the
 *   marker is younger than WATCH_FRESH_MS by S3's own clock (its Date against its Last-Modified).
 */

export interface LiveUploads {
  frame: { url: string; fields: Record<string, string> };
  watched_url: string;
}

/** Where live frames and watch markers are kept (the bucket's lifecycle expires them after a day). */
export const LIVE_PREFIX = "live/";
export const liveFrameKey = (runId: string) => `${LIVE_PREFIX}${runId}/latest.jpg`;
export const liveWatchKey = (runId: string) => `${LIVE_PREFIX}${runId}/watch`;

/** The user metadata a frame carries (form fields `x-amz-meta-<name>`, headers of the object). */
export const FRAME_METADATA = ["url", "width", "height"] as const;
/** The longest page URL a frame's metadata carries (S3 takes 2 KB of user metadata in all). */
export const MAX_FRAME_METADATA_URL = 1800;

/** How often the runner looks at the watch marker (one HEAD). */
export const WATCH_CHECK_MS = 2_000;
/** A marker older than this (by S3's clock) means nobody watches any more. */
export const WATCH_FRESH_MS = 30_000;
/** How often a watching route Lambda rewrites the marker. */
export const WATCH_REFRESH_MS = 10_000;
/** At most one frame uploaded per this many ms on AWS (one PUT a second per watched run). */
export const AWS_FRAME_INTERVAL_MS = 1_000;

/** Whether an event's `uploads.live` has the shape of LiveUploads (the runner checks its event). */
export function isLiveUploads(live: unknown): live is LiveUploads {
  if (typeof live !== "object" || live === null) return false;
  const { frame, watched_url: watchedUrl } = live as Partial<LiveUploads>;
  return (
    typeof watchedUrl === "string" &&
    typeof frame === "object" &&
    frame !== null &&
    typeof frame.url === "string" &&
    typeof frame.fields === "object" &&
    frame.fields !== null &&
    Object.values(frame.fields).every((value) => typeof value === "string")
  );
}
