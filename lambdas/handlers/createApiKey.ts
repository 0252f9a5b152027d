import { DEFAULT_PLAN } from "../config/plans";
import { issueApiKey } from "../identity/issueApiKey";
import { toKeyInfo } from "../identity/toKeyInfo";
import { defineRoute } from "../http/defineRoute";
import { ApiError } from "../http/errors";
import { json } from "../http/response";
import { CreateApiKeyBody } from "../schemas/keySchemas";

/**
 * POST /api-keys: a new key for the caller's account. An admin key may also create
 * admin keys and keys for another account (created if new, on `plan`).
 */
export const createApiKey = defineRoute({ body: CreateApiKeyBody }, async ({ body, principal }, deps) => {
  const account = body.account ?? principal.account_id;
  const privileged = account !== principal.account_id || body.plan !== undefined || body.admin === true;
  if (privileged && !principal.admin) {
    throw new ApiError("forbidden", "Only an admin key can create admin keys, keys for other accounts, or set a plan");
  }
  if (body.plan !== undefined && !deps.config.plans[body.plan]) {
    throw new ApiError("invalid_request", `Unknown plan '${body.plan}'; plans: ${Object.keys(deps.config.plans).join(", ")}`, {
      field: "plan",
    });
  }
  const existing = await deps.store.accounts.getAccount(account);
  if (existing && body.plan !== undefined && existing.plan !== body.plan) {
    await deps.store.accounts.setPlan(account, body.plan);
    deps.identity.forget({ account_id: account });
  }
  const plan = body.plan ?? existing?.plan ?? DEFAULT_PLAN;
  const issued = await issueApiKey(deps.store.accounts, {
    account_id: account,
    plan,
    admin: body.admin ?? false,
    name: body.name ?? null,
    now: deps.clock.now(),
  });
  return json(201, { ...toKeyInfo(issued.item), key: issued.key, plan });
});
