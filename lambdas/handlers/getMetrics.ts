import { resolveFunction } from "../functions/resolveFunction";
import { defineRoute } from "../http/defineRoute";
import { json } from "../http/response";
import { FINAL_STATUSES } from "../runs/types";

/**
 * Percentiles are taken over the finished runs among this many latest runs (read through the
 * runs index, which keeps no results or logs: all of them, whatever their size).
 */
const RECENT_RUNS = 100;

/** GET /functions/{ref}/metrics: call counts from counters, percentiles from recent runs. */
export const getMetrics = defineRoute({}, async ({ params, principal }, deps) => {
  const fn = await resolveFunction(deps.store, principal, params.ref ?? "");
  const counters = await deps.store.meters.functionCounters(fn.function_id);
  const recent = (await deps.store.runs.recent(fn.function_id, RECENT_RUNS))
    .filter((run) => FINAL_STATUSES.includes(run.status) && run.duration_ms !== null)
    .map((run) => run.duration_ms as number)
    .sort((a, b) => a - b);
  const total = counters.invocations;
  return json(200, {
    total_calls: total,
    success_rate: total === 0 ? 0 : round((counters.succeeded / total) * 100),
    avg_duration: total === 0 ? 0 : round(counters.execution_ms / total),
    succeeded_calls: counters.succeeded,
    failed_calls: counters.failed,
    timed_out_calls: counters.timed_out,
    skipped_scheduled_runs: counters.schedule_skips,
    p50_duration: percentile(recent, 0.5),
    p95_duration: percentile(recent, 0.95),
    last_called_at: counters.last_called_at,
  });
});

function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? null;
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
