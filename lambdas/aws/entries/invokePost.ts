import { invokePost } from "../../handlers/invokePost";
import { lazyRoute } from "../lazyHandlers";
import { invokeRouteDeps } from "../routeDeps/invokeRouteDeps";

export const handler = lazyRoute(invokePost, invokeRouteDeps);
