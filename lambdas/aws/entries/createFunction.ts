import { createFunction } from "../../handlers/createFunction";
import { lazyRoute } from "../lazyHandlers";
import { functionsRouteDeps } from "../routeDeps/functionsRouteDeps";

export const handler = lazyRoute(createFunction, functionsRouteDeps);
