import { getUsage } from "../../handlers/getUsage";
import { lazyRoute } from "../lazyHandlers";
import { dataRouteDeps } from "../routeDeps/dataRouteDeps";

export const handler = lazyRoute(getUsage, dataRouteDeps);
