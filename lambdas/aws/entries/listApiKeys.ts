import { listApiKeys } from "../../handlers/listApiKeys";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(listApiKeys);
