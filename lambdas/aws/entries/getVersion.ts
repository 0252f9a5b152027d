import { getVersion } from "../../handlers/getVersion";
import { lazyRoute } from "../lazyHandlers";
import { dataRouteDeps } from "../routeDeps/dataRouteDeps";

export const handler = lazyRoute(getVersion, dataRouteDeps);
