import { deleteApiKey } from "../../handlers/deleteApiKey";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(deleteApiKey);
