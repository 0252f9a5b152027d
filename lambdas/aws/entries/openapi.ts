import { openapi } from "../../handlers/openapi";
import { lazyRoute } from "../lazyHandlers";
import { openRouteDeps } from "../routeDeps/dataRouteDeps";

export const handler = lazyRoute(openapi, openRouteDeps);
