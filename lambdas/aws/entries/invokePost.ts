import { invokePost } from "../../handlers/invokePost";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(invokePost);
