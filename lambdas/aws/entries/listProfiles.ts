import { listProfiles } from "../../profiles/handlers/listProfiles";
import { lazyRoute } from "../lazyHandlers";
import { dataRouteDeps } from "../routeDeps/dataRouteDeps";

export const handler = lazyRoute(listProfiles, dataRouteDeps);
