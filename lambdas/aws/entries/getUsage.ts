import { getUsage } from "../../handlers/getUsage";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(getUsage);
