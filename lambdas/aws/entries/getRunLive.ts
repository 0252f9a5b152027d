import { runLiveRoute } from "../../handlers/getRunLive";
import { lazyRoute } from "../lazyHandlers";
import { liveRouteDeps } from "../routeDeps/liveRouteDeps";
import { longPolled } from "../longPoll";

/**
 * API Gateway buffers responses: on AWS the live route answers by long polling, with the frames
 * its group's deps read from the run bucket (liveRouteDeps.ts; docs/deploy.md, "Live view on AWS").
 */
const getRunLive = longPolled(runLiveRoute({ pollMs: 1_000 }));

export const handler = lazyRoute(getRunLive, liveRouteDeps);
