import { getFunctionOpenapi } from "../../handlers/getFunctionOpenapi";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(getFunctionOpenapi);
