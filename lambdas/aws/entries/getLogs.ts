import { getLogs } from "../../handlers/getLogs";
import { lazyRoute } from "../lazyHandlers";
import { dataRouteDeps } from "../routeDeps/dataRouteDeps";

export const handler = lazyRoute(getLogs, dataRouteDeps);
