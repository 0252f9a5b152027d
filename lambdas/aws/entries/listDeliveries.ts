import { listDeliveries } from "../../handlers/listDeliveries";
import { lazyRoute } from "../lazyHandlers";
import { dataRouteDeps } from "../routeDeps/dataRouteDeps";

export const handler = lazyRoute(listDeliveries, dataRouteDeps);
