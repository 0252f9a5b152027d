import { dashboardAsset } from "../../handlers/dashboardAsset";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(dashboardAsset);
