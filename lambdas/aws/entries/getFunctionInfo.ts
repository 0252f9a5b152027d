import { getFunctionInfo } from "../../handlers/getFunctionInfo";
import { lazyRoute } from "../lazyHandlers";
import { dataRouteDeps } from "../routeDeps/dataRouteDeps";

export const handler = lazyRoute(getFunctionInfo, dataRouteDeps);
