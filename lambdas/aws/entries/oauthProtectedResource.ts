import { oauthProtectedResource } from "../../handlers/oauthProtectedResource";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(oauthProtectedResource);
