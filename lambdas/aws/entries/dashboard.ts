import { dashboard } from "../../handlers/dashboard";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(dashboard);
