import { getFunctionOpenapi } from "../../handlers/getFunctionOpenapi";
import { lazyRoute } from "../lazyHandlers";
import { dataRouteDeps } from "../routeDeps/dataRouteDeps";

export const handler = lazyRoute(getFunctionOpenapi, dataRouteDeps);
