import { defineRoute, type RouteFactory } from "../http/defineRoute";
import { EVENT_STREAM_HEADERS, type StreamingResult } from "../http/streamBody";
import { followLiveFrames } from "../live/followLiveFrames";
import { FRAME_ID } from "../live/liveFrames";
import { ownRun } from "../runs/ownRun";

/**
 * GET /runs/{run_id}/live: the live view of one of the account's runs, as server-sent events
 * (`frame` events, then `end`; lambdas/live/followLiveFrames.ts). `pollMs`: how often the store
 * is read while no frame comes from this instance (a queued run, another instance's run).
 */
export function runLiveRoute(options: { pollMs: number }): RouteFactory {
  return defineRoute({}, async ({ params, principal, headers }, deps) => {
    const run = await ownRun(deps, principal, params.run_id ?? "");
    // Where a reconnecting watcher resumes (frames have ids on AWS); any other text is no frame's id, and is ignored.
    const lastEventId = headers["last-event-id"]?.trim();
    const after = lastEventId !== undefined && FRAME_ID.test(lastEventId) ? lastEventId : undefined;
    const result: StreamingResult = {
      statusCode: 200,
      headers: { ...EVENT_STREAM_HEADERS },
      body: "",
      stream: {
        owner: principal.account_id,
        open: (signal) => followLiveFrames(deps, run, { pollMs: options.pollMs, signal, now: () => deps.clock.now(), ...(after === undefined ? {} : { after }) }),
      },
    };
    return result;
  });
}

/** The route as the local server serves it. */
export const getRunLive = runLiveRoute({ pollMs: 500 });
