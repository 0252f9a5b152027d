import { listSecrets } from "../../handlers/listSecrets";
import { lazyRoute } from "../lazyHandlers";
import { dataRouteDeps } from "../routeDeps/dataRouteDeps";

export const handler = lazyRoute(listSecrets, dataRouteDeps);
