import { getMetrics } from "../../handlers/getMetrics";
import { lazyRoute } from "../lazyHandlers";
import { dataRouteDeps } from "../routeDeps/dataRouteDeps";

export const handler = lazyRoute(getMetrics, dataRouteDeps);
