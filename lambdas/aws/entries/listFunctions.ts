import { listFunctions } from "../../handlers/listFunctions";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(listFunctions);
