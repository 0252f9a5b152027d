import type { Deps } from "../deps";
import type { FunctionItem } from "../functions/types";
import type { InvokeResult } from "../runtime/runtime";
import { ApiError } from "../http/errors";
import { endedRun, finishRun } from "../runs/finishRun";
import { newRun } from "../runs/newRun";
import { nextTurn } from "../runs/nextTurn";
import { isStoreUnavailable } from "../store/dynamo";
import { whenStoreIsBack } from "../store/whenStoreIsBack";
import { admitRun, type Lease } from "./admitRun";
import type { RunItem, RunTrigger } from "../runs/types";
import { redactResult, secretsForRun } from "../secrets/functionSecrets";
import { Redactor } from "../secrets/redactor";

export interface RunInput {
  fn: FunctionItem;
  /** The plan of the function's account: its limits admit the run. */
  plan: string;
  version: number;
  params: Record<string, unknown>;
  trigger: RunTrigger;
  /** How long to wait for capacity before 429. */
  waitMs: number;
  /** Aborted when the caller stops waiting for the end (see InvokeRequest.signal). */
  signal?: AbortSignal;
  /** The run's id, when the caller chose it first (an idempotency key's claim names it). */
  runId?: string;
  requestOrigin?: string | null;
  sdkVersion?: string | null;
  /** The API's base URL, for the URLs of the run's artifacts (empty: they are relative). */
  baseUrl?: string | null;
  /**
   * When the record says `running`: `at-start` (before startRun resolves: the caller answers
   * at once, or the process may be frozen after it) or `if-long` (only a run still going
   * after RUNNING_MARK_MS: a caller that waits for the end sees no difference, and a short
   * run costs one store write less). Default `at-start`.
   */
  markRunning?: "at-start" | "if-long";
  /**
   * The run's invocation was counted, and its queued record written, already (an item of a
   * batch: startBatchRuns): admission takes a slot without counting it again, the queued record
   * is not written again, and a run refused or never taken by the runtime keeps it for its batch
   * to start or end.
   */
  counted?: true;
  /** The batch the run is an item of (recorded on the run as `batch_id`). */
  batchId?: string;
}

/** How long a run waits for its `running` mark when it is marked only `if-long`. */
export const RUNNING_MARK_MS = 200;

export interface StartedRun {
  /** The run as first written (queued, or running after a warm start). */
  run: RunItem;
  /** Settles with the final run record; never rejects once the run exists. */
  completion: Promise<RunItem>;
}

/**
 * Starts a run through the runtime. The run's record (queued) and its admission under the
 * account's plan are written side by side, so the record exists before the run can start and
 * the caller waits for one store round trip, not two; a run refused by a limit (429), or by
 * the runtime before it took the run, is removed again and never started. When the runtime
 * starts the automation, the record is marked running (see `markRunning`) without holding the
 * start up, and the run's end waits for that write before writing the final record, then
 * meters it (finishRun: once, by whoever records the end first).
 * Resolves once the runtime has the run (`at-start`: and its record says so); throws (429)
 * when it was never started.
 */
export async function startRun(deps: Deps, input: RunInput): Promise<StartedRun> {
  const { fn, version, params, trigger } = input;
  // The run gets the function's secrets; what is kept of it never shows their values.
  const secrets = await secretsForRun(deps, fn.function_id, fn.has_secrets === true);
  const redactor = new Redactor(Object.values(secrets.values));
  const created = newRun(fn, {
    version,
    trigger,
    params: redactor.value(params),
    queuedAt: deps.clock.now().toISOString(),
    requestOrigin: input.requestOrigin,
    sdkVersion: input.sdkVersion,
    ...(input.batchId === undefined ? {} : { batchId: input.batchId }),
  });
  let run: RunItem = input.runId ? { ...created, run_id: input.runId } : created;
  const started = Date.now();
  const lease = await admitRecorded(deps, run, input);
  let markStarted: () => void = () => undefined;
  const startedSignal = new Promise<void>((resolve) => {
    markStarted = resolve;
  });
  /** The runtime took the run: from here on it ends with a final record, whatever happens. */
  let accepted = false;
  let runningWrite: Promise<void> = Promise.resolve();
  let markTimer: NodeJS.Timeout | undefined;
  const markRunning = () => {
    // The queued record already stands for the run, and a run that ended meanwhile keeps its
    // final record (conditional write).
    runningWrite = deps.store.runs.putIfActive(run).then(
      () => markStarted(),
      (error: unknown) => {
        deps.log(`run ${run.run_id}: recording its start failed: ${(error as Error).message}`);
        markStarted();
      },
    );
  };
  let ending: InvokeResult | undefined;
  const finish = async (result: InvokeResult): Promise<RunItem> => {
    ending = redactResult(redactor, result);
    clearTimeout(markTimer);
    await runningWrite; // the final record must not be overtaken by the running one
    run = await finishRun(deps, run, ending);
    return run;
  };
  const completion = deps.runtime
    .invoke(
      {
        fn,
        version,
        runId: run.run_id,
        params,
        waitMs: Math.max(0, input.waitMs - (Date.now() - started)),
        artifactsUrl: `${(input.baseUrl ?? "").replace(/\/+$/, "")}/runs/${run.run_id}/artifacts/`,
        ...(input.signal ? { signal: input.signal } : {}),
        secrets,
      },
      {
        onQueued: async () => {
          accepted = true;
          markStarted();
        },
        onRunning: async () => {
          accepted = true;
          run = { ...run, status: "running", started_at: deps.clock.now().toISOString() };
          if (input.markRunning === "if-long") {
            markStarted();
            markTimer = setTimeout(markRunning, RUNNING_MARK_MS);
          } else {
            markRunning(); // not awaited: the automation starts meanwhile
          }
        },
      },
    )
    .then(finish, async (error: unknown) => {
      if (!accepted) {
        if (!input.counted) await forgetRun(deps, run);
        throw error;
      }
      if (error instanceof ApiError) {
        // Refused after the run was recorded (a throttled Lambda): the run keeps the refusal.
        return finish({ ...emptyResult(), status: "failed", error: { code: error.code, message: error.message } });
      }
      deps.log(`run ${run.run_id} failed inside the service: ${(error as Error).stack ?? error}`);
      const message = "The run failed inside the service; the request id and run id identify it in the logs";
      return finish({ ...emptyResult(), status: "failed", error: { code: "internal_error", message } });
    })
    .catch((error: unknown) => {
      if (!accepted) throw error;
      // The final write failed, and not for an outage (finishRun writes it once the store is
      // back): the run stays active in the store and is settled as crashed at the next start;
      // the caller still gets the outcome.
      deps.log(`run ${run.run_id}: recording its end failed: ${(error as Error).message}`);
      return ending ? endedRun(run, ending, deps.clock.now().toISOString()) : run;
    });
  // The lease is given back when the run ends (a run that never started is not counted), in
  // the next turn of the event loop: the caller's answer is written in this one. A store that
  // is away meanwhile gets it once it is back (else the slot stayed taken until it expired).
  const release = (refund: boolean) => () =>
    nextTurn()
      .then(() => lease.release(refund))
      .catch((error: unknown) => {
        const gaveUp = (failure: unknown) => deps.log(`releasing the lease of ${run.run_id} failed: ${(failure as Error).message}`);
        if (isStoreUnavailable(error)) whenStoreIsBack(() => lease.release(refund), { done: () => undefined, gaveUp });
        else gaveUp(error);
      });
  void completion.then(release(false), release(true));
  await Promise.race([startedSignal, completion]);
  return { run, completion };
}

/**
 * Admits the run and writes its queued record at the same time. When either fails, what the
 * other did is undone (the lease refunded, the record removed) and the failure is thrown.
 */
async function admitRecorded(deps: Deps, run: RunItem, input: RunInput): Promise<Lease> {
  const admission = { accountId: run.account_id, plan: input.plan, runId: run.run_id, timeoutSeconds: input.fn.timeout_seconds, counted: input.counted === true };
  // A counted run's queued record was written by its batch already.
  const recording = input.counted ? Promise.resolve() : deps.store.runs.put(run);
  const [admitted, recorded] = await Promise.allSettled([admitRun(deps, admission, input.waitMs), recording]);
  if (admitted.status === "fulfilled" && recorded.status === "fulfilled") return admitted.value;
  if (admitted.status === "fulfilled") {
    await admitted.value.release(true).catch((error: unknown) => deps.log(`refunding ${run.run_id} failed: ${(error as Error).message}`));
  }
  if (recorded.status === "fulfilled" && !input.counted) await forgetRun(deps, run);
  throw admitted.status === "rejected" ? admitted.reason : (recorded as PromiseRejectedResult).reason;
}

/** Removes the record of a run that was never started (left queued, the next start removes it). */
async function forgetRun(deps: Deps, run: RunItem): Promise<void> {
  await deps.store.runs
    .deleteIfQueued(run.run_id)
    .catch((error: unknown) => deps.log(`removing never-started run ${run.run_id} failed: ${(error as Error).message}`));
}

function emptyResult(): InvokeResult {
  return { status: "failed", result_json: null, error: null, logs: "", duration_ms: 0, browser_ms: 0, peak_memory_mb: null };
}
