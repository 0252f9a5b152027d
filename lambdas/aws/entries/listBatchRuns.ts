import { listBatchRuns } from "../../handlers/listBatchRuns";
import { lazyRoute } from "../lazyHandlers";
import { dataRouteDeps } from "../routeDeps/dataRouteDeps";

export const handler = lazyRoute(listBatchRuns, dataRouteDeps);
