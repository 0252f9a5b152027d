import { getFunctionInfo } from "../../handlers/getFunctionInfo";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(getFunctionInfo);
