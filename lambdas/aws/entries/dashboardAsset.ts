import { dashboardAsset } from "../../handlers/dashboardAsset";
import { lazyRoute } from "../lazyHandlers";
import { openRouteDeps } from "../routeDeps/dataRouteDeps";

export const handler = lazyRoute(dashboardAsset, openRouteDeps);
