import { deleteFunction } from "../../handlers/deleteFunction";
import { lazyRoute } from "../lazyHandlers";
import { functionsRouteDeps } from "../routeDeps/functionsRouteDeps";

export const handler = lazyRoute(deleteFunction, functionsRouteDeps);
