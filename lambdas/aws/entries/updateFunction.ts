import { updateFunction } from "../../handlers/updateFunction";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(updateFunction);
