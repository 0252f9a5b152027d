import { runEventsRoute } from "../../handlers/getRunEvents";
import { lazyRoute } from "../lazyHandlers";
import { dataRouteDeps } from "../routeDeps/dataRouteDeps";
import { longPolled } from "../longPoll";

/** API Gateway buffers responses: on AWS the events route answers by long polling (see longPoll.ts). */
const getRunEvents = longPolled(runEventsRoute({ pollMs: 1_000 }));

export const handler = lazyRoute(getRunEvents, dataRouteDeps);
