import { invokeGet } from "../../handlers/invokeGet";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(invokeGet);
