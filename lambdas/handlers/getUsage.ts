import { DEFAULT_PLAN, storageCapBytes } from "../config/plans";
import { defineRoute } from "../http/defineRoute";
import { json } from "../http/response";
import { UsageQuery } from "../schemas/querySchemas";
import type { UsageCounters } from "../store/meterStore";

/** GET /usage?month=YYYY-MM: the account's metered usage in a month, its plan's limits and what remains. */
export const getUsage = defineRoute({ query: UsageQuery }, async ({ principal, query }, deps) => {
  const now = deps.clock.now();
  const thisMonth = now.toISOString().slice(0, 7);
  const month = query.month ?? thisMonth;
  const plan = deps.config.plans[principal.plan] ?? deps.config.plans[DEFAULT_PLAN];
  const usage = await deps.store.meters.usage(principal.account_id, month);
  const current = month === thisMonth ? await deps.store.limits.current(principal.account_id, now) : null;
  const storageBytes = await deps.store.storage.held(principal.account_id, now);
  const functions = await Promise.all(
    Object.entries(usage.functions).map(async ([functionId, counters]) => ({
      function_id: functionId,
      name: (await deps.store.functions.getById(functionId))?.name ?? null,
      ...view(counters),
    })),
  );
  return json(200, {
    account: principal.account_id,
    month,
    plan: principal.plan,
    limits: plan ?? null,
    total: view(usage.total),
    functions: functions.sort((a, b) => b.invocations - a.invocations || a.function_id.localeCompare(b.function_id)),
    remaining:
      current && plan
        ? { invocations: Math.max(0, plan.invocations_per_month - current.invocations), concurrency: Math.max(0, plan.concurrency - current.inFlight) }
        : null,
    storage_bytes: storageBytes,
    max_storage_bytes: storageCapBytes(plan),
  });
});

function view(counters: UsageCounters) {
  return {
    invocations: counters.invocations,
    execution_ms: counters.execution_ms,
    gb_seconds: Math.round((counters.mb_ms / 1024 / 1000) * 1000) / 1000,
    browser_session_ms: counters.browser_ms,
    browser_session_seconds: Math.round(counters.browser_ms) / 1000,
    artifact_bytes: counters.artifact_bytes,
  };
}
