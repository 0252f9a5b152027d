import { listVersions } from "../../handlers/listVersions";
import { lazyRoute } from "../lazyHandlers";
import { dataRouteDeps } from "../routeDeps/dataRouteDeps";

export const handler = lazyRoute(listVersions, dataRouteDeps);
