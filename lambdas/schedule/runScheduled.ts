import type { Deps } from "../deps";
import { ApiError } from "../http/errors";
import { startRun } from "../invoke/startRun";
import { validateParams } from "../invoke/validateParams";
import { newRun } from "../runs/newRun";
import type { RunItem } from "../runs/types";
import { nextRunAt } from "../functions/schedule";

export type FiringResult =
  /**
   * `run`: its end, on a runtime that runs it in this process (local). On AWS the run
   * workflow's recorder writes the end and nothing here watches the run after its start, so
   * `run` never settles there.
   */
  | { outcome: "started"; runId: string; run: Promise<RunItem> }
  | { outcome: "skipped" | "refused" | "duplicate" | "unscheduled"; reason: string };

/**
 * The one entry of a scheduled firing, used by the local scheduler and the scheduled-run
 * Lambda alike: claims `(function_id, scheduled_for)` so it runs once whoever fires it,
 * skips it while the previous scheduled run is still going or the function is not active
 * (deploying or failed), and otherwise runs the function
 * through the same run path as HTTP invocations, with trigger `schedule`.
 */
export async function runScheduled(deps: Deps, functionId: string, scheduledFor: string): Promise<FiringResult> {
  const fn = await deps.store.functions.getById(functionId);
  if (!fn?.schedule) return { outcome: "unscheduled", reason: "the function is gone or has no schedule" };
  if (!(await deps.store.schedules.claim(functionId, scheduledFor))) {
    return { outcome: "duplicate", reason: "another scheduler fired it" };
  }
  await deps.store.functions.setNextRun(fn, nextRunAt(fn.schedule, fn.schedule_timezone, new Date(Date.parse(scheduledFor) + 1)));
  const [, previous] = await deps.store.schedules.latest(functionId, 2);
  const previousRun = previous?.run_id ? await deps.store.runs.get(previous.run_id) : undefined;
  if (previousRun && (previousRun.status === "queued" || previousRun.status === "running")) {
    const reason = `the previous scheduled run ${previousRun.run_id} is still ${previousRun.status}`;
    await deps.store.schedules.settle(functionId, scheduledFor, "skipped", null, reason);
    await deps.store.meters.recordSkip(fn, scheduledFor);
    return { outcome: "skipped", reason };
  }
  if (fn.status !== "active") {
    // Deploying (on AWS its Lambda may not exist yet) or failed: the firing would only crash.
    const reason = `the function is ${fn.status}${fn.status_reason ? `: ${fn.status_reason}` : ""}`;
    await deps.store.schedules.settle(functionId, scheduledFor, "skipped", null, reason);
    await deps.store.meters.recordSkip(fn, scheduledFor);
    return { outcome: "skipped", reason };
  }
  const params = validateParams(fn.variables ?? [], fn.schedule_params ?? {}, "json", fn.input_schema);
  // Aborted once the run started: a runtime that records runs itself (AWS) stops reading the
  // run's record then, as for a `Prefer: respond-async` request (the scheduled-run Lambda
  // returns at once, and reads left going would run on in its frozen container).
  const watching = new AbortController();
  try {
    const account = await deps.store.accounts.getAccount(fn.account_id);
    const { run, completion } = await startRun(deps, {
      fn,
      plan: account?.plan ?? "",
      version: fn.latest_version,
      params,
      trigger: "schedule",
      retryable: true,
      waitMs: deps.config.syncWaitSeconds * 1000,
      baseUrl: deps.config.publicUrl,
      signal: watching.signal,
    });
    watching.abort();
    await deps.store.schedules.settle(functionId, scheduledFor, "started", run.run_id, null);
    return { outcome: "started", runId: run.run_id, run: completion };
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 429) throw error;
    // Refused by a limit: never silently lost, it stays in the function's logs.
    const refused = refusedRun(deps, fn, params, error, scheduledFor);
    await deps.store.runs.put(refused);
    await deps.store.schedules.settle(functionId, scheduledFor, "refused", refused.run_id, error.message);
    return { outcome: "refused", reason: error.message };
  }
}

function refusedRun(
  deps: Deps,
  fn: { account_id: string; function_id: string; name: string; latest_version: number; memory_mb: number; timeout_seconds: number },
  params: Record<string, unknown>,
  error: ApiError,
  scheduledFor: string,
): RunItem {
  const now = deps.clock.now().toISOString();
  return {
    ...newRun(fn, { version: fn.latest_version, trigger: "schedule", params, queuedAt: now }),
    status: "failed",
    error: { code: error.code, message: `The firing for ${scheduledFor} was refused: ${error.message}` },
    finished_at: now,
  };
}
