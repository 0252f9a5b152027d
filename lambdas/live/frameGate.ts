/**
 * The service's gate for live-view frames from a worker (untrusted: the worker runs user code).
 * A frame passes only while someone watches the run, at most one per FRAME_INTERVAL_MS; the
 * rest are dropped, and a worker that keeps sending past the rate (MAX_DROPPED per run) floods.
 * The frame's shape and size were parsed already (workerChannel).
 */
import { FRAME_INTERVAL_MS } from "./liveFrames";

/** Frames dropped in one run before the worker counts as flooding (and is replaced). */
export const MAX_DROPPED = 500;

export class FrameGate {
  private lastPassed = Number.NEGATIVE_INFINITY;
  private dropped = 0;

  /** `watched`: someone watches the run now; `now`: the service's clock (ms). */
  accept(watched: boolean, now: number): "pass" | "drop" | "flood" {
    if (watched && now - this.lastPassed >= FRAME_INTERVAL_MS) {
      this.lastPassed = now;
      return "pass";
    }
    return ++this.dropped > MAX_DROPPED ? "flood" : "drop";
  }
}
