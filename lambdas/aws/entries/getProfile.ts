import { getProfile } from "../../profiles/handlers/getProfile";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(getProfile);
