import { createApiKey } from "../../handlers/createApiKey";
import { lazyRoute } from "../lazyHandlers";
import { dataRouteDeps } from "../routeDeps/dataRouteDeps";

export const handler = lazyRoute(createApiKey, dataRouteDeps);
