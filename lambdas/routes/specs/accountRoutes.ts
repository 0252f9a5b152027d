import { ApiKeyList, CreateApiKeyBody, CreatedApiKey, SetPlanBody } from "../../schemas/keySchemas";
import { AccountPlan, UsageReport } from "../../schemas/usageSchemas";
import { UsageQuery } from "../../schemas/querySchemas";
import type { RouteSpec } from "../routeSpec";

/** The account: usage, plan, API keys. */
export const ACCOUNT_ROUTES = [
  {
    operationId: "getUsage",
    method: "GET",
    path: "/usage",
    summary: "Metered usage in a month (invocations, execution ms, GB-seconds, browser-session ms and s), the plan's limits and what remains",
    tag: "usage",
    auth: true,
    status: 200,
    query: UsageQuery,
    response: UsageReport,
  },
  {
    operationId: "setAccountPlan",
    method: "PUT",
    path: "/accounts/{account}/plan",
    summary: "Admin: move an account to another plan",
    tag: "usage",
    auth: true,
    status: 200,
    body: SetPlanBody,
    response: AccountPlan,
    errors: ["forbidden", "account_not_found"],
  },
  {
    operationId: "createApiKey",
    method: "POST",
    path: "/api-keys",
    summary: "Create an API key (the secret is shown once)",
    tag: "keys",
    auth: true,
    status: 201,
    body: CreateApiKeyBody,
    response: CreatedApiKey,
    errors: ["forbidden"],
  },
  {
    operationId: "listApiKeys",
    method: "GET",
    path: "/api-keys",
    summary: "The account's API keys",
    tag: "keys",
    auth: true,
    status: 200,
    response: ApiKeyList,
  },
  {
    operationId: "deleteApiKey",
    method: "DELETE",
    path: "/api-keys/{id}",
    summary: "Revoke an API key",
    tag: "keys",
    auth: true,
    status: 204,
    errors: ["key_not_found"],
  },
] as const satisfies readonly RouteSpec[];
