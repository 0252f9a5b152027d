import { dashboard } from "../../handlers/dashboard";
import { lazyRoute } from "../lazyHandlers";
import { openRouteDeps } from "../routeDeps/dataRouteDeps";

export const handler = lazyRoute(dashboard, openRouteDeps);
