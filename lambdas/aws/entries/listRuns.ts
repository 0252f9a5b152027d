import { listRuns } from "../../handlers/listRuns";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(listRuns);
