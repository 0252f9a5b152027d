import { getRun } from "../../handlers/getRun";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(getRun);
