import { updateFunction } from "../../handlers/updateFunction";
import { lazyRoute } from "../lazyHandlers";
import { functionsRouteDeps } from "../routeDeps/functionsRouteDeps";

export const handler = lazyRoute(updateFunction, functionsRouteDeps);
