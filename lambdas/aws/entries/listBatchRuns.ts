import { listBatchRuns } from "../../handlers/listBatchRuns";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(listBatchRuns);
