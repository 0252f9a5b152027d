import { getRun } from "../../handlers/getRun";
import { lazyRoute } from "../lazyHandlers";
import { dataRouteDeps } from "../routeDeps/dataRouteDeps";

export const handler = lazyRoute(getRun, dataRouteDeps);
