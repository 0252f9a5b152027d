import { randomBytes } from "node:crypto";
import type { Deps } from "../deps";
import type { FunctionItem } from "../functions/types";
import type { InvokeResult } from "../runtime/runtime";
import { ApiError } from "../http/errors";
import { finishRun } from "../runs/finishRun";
import { newRunId } from "../runs/runIds";
import { nextTurn } from "../runs/nextTurn";
import { admitRun } from "./admitRun";
import type { RunItem, RunTrigger } from "../runs/types";

export interface RunInput {
  fn: FunctionItem;
  /** The plan of the function's account: its limits admit the run. */
  plan: string;
  version: number;
  params: Record<string, unknown>;
  trigger: RunTrigger;
  /** How long to wait for capacity before 429. */
  waitMs: number;
  requestOrigin?: string | null;
  sdkVersion?: string | null;
}

export interface StartedRun {
  /** The run as first written (queued, or running after a warm start). */
  run: RunItem;
  /** Settles with the final run record; never rejects once the run exists. */
  completion: Promise<RunItem>;
}

/**
 * Starts a run through the runtime: the run record is written once capacity is reserved
 * (queued), updated when the automation starts (running) and when it ends, then metered
 * (finishRun: once, by whoever records the end first).
 * Resolves when the run exists; throws (429) when it was never started.
 */
export async function startRun(deps: Deps, input: RunInput): Promise<StartedRun> {
  const { fn, version, params, trigger } = input;
  let run: RunItem = {
    run_id: newRunId(),
    account_id: fn.account_id,
    function_id: fn.function_id,
    function_name: fn.name,
    version,
    trigger,
    status: "queued",
    params,
    result_json: null,
    error: null,
    logs: "",
    queued_at: deps.clock.now().toISOString(),
    started_at: null,
    finished_at: null,
    duration_ms: null,
    browser_ms: 0,
    peak_memory_mb: null,
    memory_mb: fn.memory_mb,
    request_origin: input.requestOrigin ?? null,
    sdk_version: input.sdkVersion ?? null,
    completion_token: randomBytes(18).toString("base64url"),
  };
  const started = Date.now();
  const lease = await admitRun(deps, { accountId: fn.account_id, plan: input.plan, runId: run.run_id, timeoutSeconds: fn.timeout_seconds }, input.waitMs);
  let markQueued: () => void = () => undefined;
  const queued = new Promise<void>((resolve) => {
    markQueued = resolve;
  });
  let exists = false;
  // Conditional: when the run was recorded already (on AWS the run-completion Lambda does it),
  // that record stands and is returned, and the run is not counted again.
  let ending: InvokeResult | undefined;
  const finish = async (result: InvokeResult): Promise<RunItem> => {
    ending = result;
    run = await finishRun(deps, run, result);
    return run;
  };
  const created = () => {
    exists = true;
    markQueued();
  };
  const completion = deps.runtime
    .invoke(
      {
        fn,
        version,
        runId: run.run_id,
        completionToken: run.completion_token ?? "",
        params,
        waitMs: Math.max(0, input.waitMs - (Date.now() - started)),
      },
      {
        onQueued: async () => {
          await deps.store.runs.put(run);
          created();
        },
        onRunning: async () => {
          run = { ...run, status: "running", started_at: deps.clock.now().toISOString() };
          await deps.store.runs.put(run);
          created();
        },
      },
    )
    .then(finish, async (error: unknown) => {
      if (!exists) throw error;
      if (error instanceof ApiError) {
        // Refused after the run was recorded (a throttled Lambda): the run keeps the refusal.
        return finish({ ...emptyResult(), status: "failed", error: { code: error.code, message: error.message } });
      }
      deps.log(`run ${run.run_id} failed inside the service: ${(error as Error).stack ?? error}`);
      const message = "The run failed inside the service; the request id and run id identify it in the logs";
      return finish({ ...emptyResult(), status: "failed", error: { code: "internal_error", message } });
    })
    .catch((error: unknown) => {
      if (!exists) throw error;
      // The final write failed (the store went away): the run stays active in the store and
      // is settled as crashed at the next start; the caller still gets the outcome.
      deps.log(`run ${run.run_id}: recording its end failed: ${(error as Error).message}`);
      return ending ? { ...run, ...ending, finished_at: deps.clock.now().toISOString() } : run;
    });
  // The lease is given back when the run ends (a run that never started is not counted), in
  // the next turn of the event loop: the caller's answer is written in this one.
  void completion.then(
    () => nextTurn().then(() => lease.release()),
    () => nextTurn().then(() => lease.release(true)),
  ).catch((error: unknown) => deps.log(`releasing the lease of ${run.run_id} failed: ${(error as Error).message}`));
  await Promise.race([queued, completion]);
  return { run, completion };
}

function emptyResult(): InvokeResult {
  return { status: "failed", result_json: null, error: null, logs: "", duration_ms: 0, browser_ms: 0, peak_memory_mb: null };
}
