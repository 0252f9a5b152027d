import { listDeliveries } from "../../handlers/listDeliveries";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(listDeliveries);
