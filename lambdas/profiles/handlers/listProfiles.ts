import { defineRoute } from "../../http/defineRoute";
import { json } from "../../http/response";

/** GET /profiles: the account's profiles, by name. */
export const listProfiles = defineRoute({}, async ({ principal }, deps) => {
  const items = await deps.store.profiles.list(principal.account_id);
  return json(200, { items });
});
