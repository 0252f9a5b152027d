import { listFunctions } from "../../handlers/listFunctions";
import { lazyRoute } from "../lazyHandlers";
import { dataRouteDeps } from "../routeDeps/dataRouteDeps";

export const handler = lazyRoute(listFunctions, dataRouteDeps);
