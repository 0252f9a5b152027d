import { defineRoute } from "../http/defineRoute";
import { ApiError } from "../http/errors";
import { noContent } from "../http/response";

/** DELETE /api-keys/{id}: revoke one of the account's keys (it stops working at once). */
export const deleteApiKey = defineRoute({}, async ({ params, principal }, deps) => {
  const keyId = params.id ?? "";
  if (!(await deps.store.accounts.deleteApiKey(principal.account_id, keyId))) {
    throw new ApiError("key_not_found", `No API key '${keyId}' in this account`, { key_id: keyId });
  }
  deps.identity.forget({ key_id: keyId });
  return noContent();
});
