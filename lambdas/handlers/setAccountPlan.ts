import { defineRoute } from "../http/defineRoute";
import { ApiError } from "../http/errors";
import { json } from "../http/response";
import { ACCOUNT_PATTERN, SetPlanBody } from "../schemas/keySchemas";

/** PUT /accounts/{account}/plan: an admin moves an account to another plan (effective at once). */
export const setAccountPlan = defineRoute({ body: SetPlanBody }, async ({ body, params, principal }, deps) => {
  if (!principal.admin) throw new ApiError("forbidden", "Only an admin key can change an account's plan");
  const plan = deps.config.plans[body.plan];
  if (!plan) {
    throw new ApiError("invalid_request", `Unknown plan '${body.plan}'; plans: ${Object.keys(deps.config.plans).join(", ")}`, {
      field: "plan",
    });
  }
  const account = params.account ?? "";
  // An account name that breaks the pattern names no account (and may be too long for a key).
  if (!ACCOUNT_PATTERN.test(account) || !(await deps.store.accounts.getAccount(account))) {
    throw new ApiError("account_not_found", `No account '${account}'`, { account });
  }
  await deps.store.accounts.setPlan(account, body.plan);
  deps.identity.forget({ account_id: account });
  return json(200, { account, plan: body.plan, limits: plan });
});
