import { health } from "../../handlers/health";
import { lazyRoute } from "../lazyHandlers";
import { openRouteDeps } from "../routeDeps/dataRouteDeps";

export const handler = lazyRoute(health, openRouteDeps);
