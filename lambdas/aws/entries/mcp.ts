import { mcp } from "../../handlers/mcp";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(mcp);
