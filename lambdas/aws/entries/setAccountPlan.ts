import { setAccountPlan } from "../../handlers/setAccountPlan";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(setAccountPlan);
