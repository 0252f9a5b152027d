import { deleteApiKey } from "../../handlers/deleteApiKey";
import { lazyRoute } from "../lazyHandlers";
import { dataRouteDeps } from "../routeDeps/dataRouteDeps";

export const handler = lazyRoute(deleteApiKey, dataRouteDeps);
