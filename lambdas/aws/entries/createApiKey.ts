import { createApiKey } from "../../handlers/createApiKey";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(createApiKey);
