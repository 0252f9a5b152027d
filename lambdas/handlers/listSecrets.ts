import { resolveFunction } from "../functions/resolveFunction";
import { defineRoute } from "../http/defineRoute";
import { json } from "../http/response";

/** GET /functions/{ref}/secrets: the names of the function's secrets and when each was set; never a value. */
export const listSecrets = defineRoute({}, async ({ params, principal }, deps) => {
  const fn = await resolveFunction(deps.store, principal, params.ref ?? "");
  const secrets = await deps.store.secrets.list(fn.function_id);
  return json(200, { items: secrets.map((secret) => ({ name: secret.name, updated_at: secret.updated_at })) });
});
