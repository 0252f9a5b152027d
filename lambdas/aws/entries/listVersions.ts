import { listVersions } from "../../handlers/listVersions";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(listVersions);
