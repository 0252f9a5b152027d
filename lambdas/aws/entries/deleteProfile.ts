import { deleteProfile } from "../../profiles/handlers/deleteProfile";
import { lazyRoute } from "../lazyHandlers";
import { profilesRouteDeps } from "../routeDeps/profilesRouteDeps";

export const handler = lazyRoute(deleteProfile, profilesRouteDeps);
