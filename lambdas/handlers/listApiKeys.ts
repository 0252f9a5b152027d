import { toKeyInfo } from "../identity/toKeyInfo";
import { defineRoute } from "../http/defineRoute";
import { json } from "../http/response";

/** GET /api-keys: the account's keys, oldest first (never the secrets). */
export const listApiKeys = defineRoute({}, async ({ principal }, deps) => {
  const keys = await deps.store.accounts.listApiKeys(principal.account_id);
  return json(200, { items: keys.map(toKeyInfo) });
});
