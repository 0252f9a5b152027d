import { listRuns } from "../../handlers/listRuns";
import { lazyRoute } from "../lazyHandlers";
import { dataRouteDeps } from "../routeDeps/dataRouteDeps";

export const handler = lazyRoute(listRuns, dataRouteDeps);
