import { defineRoute } from "../../http/defineRoute";
import { ApiError } from "../../http/errors";
import { noContent } from "../../http/response";
import { profileName } from "./profileName";

/** DELETE /profiles/{name}: the profile's state, then its record (404 profile_not_found). */
export const deleteProfile = defineRoute({}, async ({ params, principal }, deps) => {
  const name = profileName(params.name);
  if (!(await deps.store.profiles.get(principal.account_id, name))) throw new ApiError("profile_not_found", `No profile named '${name}'`, { name });
  await deps.profileBlobs?.remove(principal.account_id, name);
  await deps.store.profiles.remove(principal.account_id, name);
  return noContent();
});
