import { deleteSecret } from "../../handlers/deleteSecret";
import { lazyRoute } from "../lazyHandlers";
import { dataRouteDeps } from "../routeDeps/dataRouteDeps";

export const handler = lazyRoute(deleteSecret, dataRouteDeps);
