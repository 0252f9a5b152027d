import { getLogs } from "../../handlers/getLogs";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(getLogs);
