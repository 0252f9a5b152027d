import { cancelRun } from "../../handlers/cancelRun";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(cancelRun);
