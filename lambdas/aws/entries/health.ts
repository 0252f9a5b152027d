import { health } from "../../handlers/health";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(health);
