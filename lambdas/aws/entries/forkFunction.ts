import { forkFunction } from "../../handlers/forkFunction";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(forkFunction);
