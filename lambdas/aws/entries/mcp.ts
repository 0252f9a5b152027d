import { mcp } from "../../handlers/mcp";
import { lazyRoute } from "../lazyHandlers";
import { invokeRouteDeps } from "../routeDeps/invokeRouteDeps";

export const handler = lazyRoute(mcp, invokeRouteDeps);
