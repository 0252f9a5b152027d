import { invokeGet } from "../../handlers/invokeGet";
import { lazyRoute } from "../lazyHandlers";
import { invokeRouteDeps } from "../routeDeps/invokeRouteDeps";

export const handler = lazyRoute(invokeGet, invokeRouteDeps);
