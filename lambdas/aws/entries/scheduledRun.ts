import { lazyScheduledRun } from "../lazyHandlers";
import { scheduledRunDeps } from "../routeDeps/invokeRouteDeps";

export const handler = lazyScheduledRun(scheduledRunDeps);
