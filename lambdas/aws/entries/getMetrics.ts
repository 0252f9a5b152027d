import { getMetrics } from "../../handlers/getMetrics";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(getMetrics);
