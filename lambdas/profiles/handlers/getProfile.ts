import { defineRoute } from "../../http/defineRoute";
import { ApiError } from "../../http/errors";
import { json } from "../../http/response";
import { profileName } from "./profileName";

/** GET /profiles/{name}: one profile's record (404 profile_not_found). */
export const getProfile = defineRoute({}, async ({ params, principal }, deps) => {
  const name = profileName(params.name);
  const info = await deps.store.profiles.get(principal.account_id, name);
  if (!info) throw new ApiError("profile_not_found", `No profile named '${name}'`, { name });
  return json(200, info);
});
