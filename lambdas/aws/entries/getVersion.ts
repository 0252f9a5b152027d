import { getVersion } from "../../handlers/getVersion";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(getVersion);
