import { setAccountPlan } from "../../handlers/setAccountPlan";
import { lazyRoute } from "../lazyHandlers";
import { dataRouteDeps } from "../routeDeps/dataRouteDeps";

export const handler = lazyRoute(setAccountPlan, dataRouteDeps);
