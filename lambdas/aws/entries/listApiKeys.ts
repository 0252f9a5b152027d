import { listApiKeys } from "../../handlers/listApiKeys";
import { lazyRoute } from "../lazyHandlers";
import { dataRouteDeps } from "../routeDeps/dataRouteDeps";

export const handler = lazyRoute(listApiKeys, dataRouteDeps);
