import { openapi } from "../../handlers/openapi";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(openapi);
