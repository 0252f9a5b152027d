import { listProfiles } from "../../profiles/handlers/listProfiles";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(listProfiles);
