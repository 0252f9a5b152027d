import { oauthProtectedResource } from "../../handlers/oauthProtectedResource";
import { lazyRoute } from "../lazyHandlers";
import { openRouteDeps } from "../routeDeps/dataRouteDeps";

export const handler = lazyRoute(oauthProtectedResource, openRouteDeps);
