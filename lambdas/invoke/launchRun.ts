import type { Deps } from "../deps";
import type { FunctionItem } from "../functions/types";
import type { InvokeResult, RunSecrets } from "../runtime/runtime";
import { ApiError } from "../http/errors";
import { endedRun } from "../runs/finishRun";
import { endAttempt } from "../retries/endAttempt";
import { nextTurn } from "../runs/nextTurn";
import { isStoreUnavailable } from "../store/dynamo";
import { whenStoreIsBack } from "../store/whenStoreIsBack";
import type { Lease } from "./admitRun";
import { runDeadline, type RunItem } from "../runs/types";
import { redactResult } from "../secrets/functionSecrets";
import type { Redactor } from "../secrets/redactor";
import { markWaiting } from "../queue/markWaiting";
import { shouldRetry } from "../retries/retryPolicy";

/** How long a run waits for its `running` mark when it is marked only `if-long`. */
export const RUNNING_MARK_MS = 200;

export interface StartedRun {
  /** The run as first written (queued, or running after a warm start). */
  run: RunItem;
  /** Settles with the final run record; never rejects once the run exists. */
  completion: Promise<RunItem>;
  /**
   * Whether the run still waits for a slot or a worker (`queued`), or has one (`running`, a cold
   * start included); or its final record, when this look finds it ended (a queued run that ended,
   * or was canceled, where its caller could not hear it).
   */
  phase(): Promise<"queued" | "running" | RunItem>;
}

/** A run that holds its lease, handed to the runtime. */
export interface Launch {
  run: RunItem;
  fn: FunctionItem;
  /** The real parameters (the record keeps them redacted). */
  params: Record<string, unknown>;
  secrets: RunSecrets;
  redactor: Redactor;
  lease: Lease;
  waitMs: number;
  signal?: AbortSignal;
  baseUrl?: string | null;
  markRunning?: "at-start" | "if-long";
  /**
   * The run comes out of the run queue: its deadline is counted from its start (it waited
   * before), and a refusal by the runtime before it took the run ends it `failed` (its caller
   * is long gone) instead of forgetting it.
   */
  fromQueue?: boolean;
  /** Where the run's end is to be told (InvokeRequest.notify); absent: only to whoever waits here. */
  notify?: string | null;
}

/**
 * Hands an admitted run to the runtime. When the runtime starts the automation, the record is
 * marked running (see `markRunning`) without holding the start up, and the run's end waits for
 * that write before writing the final record, then meters it (finishRun: once, by whoever
 * records the end first). The lease is given back at the end, and the account's run queue is
 * woken if runs wait for it. Resolves once the runtime has the run (`at-start`: and its record
 * says so); throws when the runtime refused it before taking it (a run not from the queue is
 * then removed, never started).
 */
export async function launchRun(deps: Deps, launch: Launch): Promise<StartedRun> {
  const { fn, params, redactor, lease } = launch;
  let run = launch.run;
  const started = Date.now();
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
  let phase: "queued" | "running" = "queued";
  const finish = async (result: InvokeResult): Promise<RunItem> => {
    ending = redactResult(redactor, result);
    clearTimeout(markTimer);
    await runningWrite; // the final record must not be overtaken by the running one
    // A run from the queue gives its slot back beside its final record, not after it: runs wait
    // for that slot, and nothing needs the record first (the release counts nothing; a service
    // that dies between the two leaves the run active, settled as crashed at the next start, as
    // when it dies before either). Not an attempt that is retried: its lease goes with its requeueing.
    if (launch.fromQueue && !shouldRetry(run, ending)) release(false, "now")();
    // The one place a local run's attempt ends: the run's end, or its next attempt queued (lambdas/retries).
    run = await endAttempt(deps, run, ending, fn, { params, baseUrl: launch.baseUrl ?? null });
    return run;
  };
  const completion = deps.runtime
    .invoke(
      {
        fn,
        version: run.version,
        runId: run.run_id,
        params,
        waitMs: Math.max(0, launch.waitMs - (Date.now() - started)),
        artifactsUrl: `${(launch.baseUrl ?? "").replace(/\/+$/, "")}/runs/${run.run_id}/artifacts/`,
        ...(launch.signal ? { signal: launch.signal } : {}),
        secrets: launch.secrets,
        attempt: run.attempt ?? 1,
        ...(launch.notify ? { notify: launch.notify } : {}),
      },
      {
        onQueued: async () => {
          accepted = true;
          // A worker is its own now (it starts cold): the run waits for nothing else, as a caller sees it.
          phase = "running";
          markStarted();
        },
        onWaiting: async (reason) => {
          accepted = true;
          markStarted();
          await markWaiting(deps, run, reason);
        },
        onRunning: async () => {
          accepted = true;
          phase = "running";
          const startedAt = deps.clock.now().toISOString();
          run = { ...run, status: "running", started_at: startedAt, ...(launch.fromQueue ? { deadline_at: runDeadline(startedAt, fn.timeout_seconds) } : {}) };
          if (launch.markRunning === "if-long") {
            markStarted();
            markTimer = setTimeout(markRunning, RUNNING_MARK_MS);
          } else {
            markRunning(); // not awaited: the automation starts meanwhile
          }
        },
      },
    )
    .then(finish, async (error: unknown) => {
      if (!accepted && !launch.fromQueue) {
        await forgetRun(deps, run);
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
      if (!accepted && !launch.fromQueue) throw error;
      // The final write failed, and not for an outage (finishRun writes it once the store is
      // back): the run stays active in the store and is settled as crashed at the next start;
      // the caller still gets the outcome.
      deps.log(`run ${run.run_id}: recording its end failed: ${(error as Error).message}`);
      return ending ? endedRun(run, ending, deps.clock.now().toISOString()) : run;
    });
  // Whoever waits for this run in this process (a sync call whose run was queued) gets its end.
  void completion.then((final) => deps.queue.ended(final), () => undefined);
  // The lease is given back when the run ends (a run that never started is not counted), in
  // the next turn of the event loop: the caller's answer is written in this one. A store that
  // is away meanwhile gets it once it is back (else the slot stayed taken until it expired).
  // Tracked as queue work: a process frozen after each event (a Lambda) gives the lease back before it is.
  let released = false;
  const release = (refund: boolean, when: "now" | "next-turn" = "next-turn") => () => {
    if (released) return;
    released = true;
    return deps.queue.track(
      (when === "now" ? Promise.resolve() : nextTurn())
        .then(() => lease.release(refund))
        .catch((error: unknown) => {
          const gaveUp = (failure: unknown) => deps.log(`releasing the lease of ${run.run_id} failed: ${(failure as Error).message}`);
          if (isStoreUnavailable(error)) whenStoreIsBack(() => lease.release(refund), { done: () => undefined, gaveUp });
          else gaveUp(error);
        }),
    );
  };
  // A run queued again for its next attempt gave its lease back as it was queued (retryRun): its
  // next attempt takes a lease of the same id, which a late release here must not remove.
  // A canceled run whose code may run on (AWS) keeps its slot: its lease lapses after the code's latest end.
  const keepsSlot = (final: RunItem) => isWaitingForRetry(final) || (final.status === "canceled" && deps.runtime.canceledRunsRunOn === true);
  void completion.then((final) => (keepsSlot(final) ? undefined : release(false)()), release(true));
  await Promise.race([startedSignal, completion]);
  return { run, completion, phase: async () => phase };
}

function isWaitingForRetry(run: RunItem): boolean {
  return run.status === "queued" && run.retry_at !== undefined;
}

/** Removes the record of a run that was never started (left queued, the next start removes it). */
export async function forgetRun(deps: Deps, run: RunItem): Promise<void> {
  await deps.store.runs
    .deleteIfQueued(run.run_id)
    .catch((error: unknown) => deps.log(`removing never-started run ${run.run_id} failed: ${(error as Error).message}`));
}

function emptyResult(): InvokeResult {
  return { status: "failed", result_json: null, error: null, logs: "", duration_ms: 0, browser_ms: 0, peak_memory_mb: null };
}
