import { getProfile } from "../../profiles/handlers/getProfile";
import { lazyRoute } from "../lazyHandlers";
import { dataRouteDeps } from "../routeDeps/dataRouteDeps";

export const handler = lazyRoute(getProfile, dataRouteDeps);
