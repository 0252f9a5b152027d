import { forkFunction } from "../../handlers/forkFunction";
import { lazyRoute } from "../lazyHandlers";
import { functionsRouteDeps } from "../routeDeps/functionsRouteDeps";

export const handler = lazyRoute(forkFunction, functionsRouteDeps);
