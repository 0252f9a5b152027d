import { cancelRun } from "../../handlers/cancelRun";
import { lazyRoute } from "../lazyHandlers";
import { cancelRouteDeps } from "../routeDeps/cancelRouteDeps";

export const handler = lazyRoute(cancelRun, cancelRouteDeps);
