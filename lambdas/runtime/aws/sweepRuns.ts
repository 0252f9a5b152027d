import { settleRun } from "../../runs/settleRun";
import type { FinishRunDeps } from "../../runs/finishRun";
import type { Store } from "../../store/store";
import { recordFailedDeployJob } from "./deployJobs";
import { type QueueDispatch, recordExecutionEnd, type ReleaseDeps } from "./recordRun";
import { releaseRunProfiles } from "../../profiles/aws/recordRunProfiles";
import { failStuckDeploys } from "./stuckDeploys";
import type { WaitQueueSweep } from "./runEnds/sweepWaitQueues";
import type { RunEndNotifier } from "./runEnds/notifyRunEnd";
import { notifyOfExecutionInput } from "./runEnds/executionNotify";
import { runOfExecution } from "./runExecutions";
import { FINAL_STATUSES, type RunStatus } from "../../runs/types";

export interface SweepDeps extends FinishRunDeps {
  store: Pick<Store, "runs" | "meters" | "limits" | "functions" | "queueItems" | "queueCounts">;
  /** Reports how many runs a scheduled sweep ended past their deadline (on AWS: an EMF log line, sweptRunsMetric.ts). */
  sweptRuns?: (count: number) => void;
  /** Starts an account's queued runs (a release by recordExecutionEnd); absent: nothing is dispatched here. */
  dispatch?: QueueDispatch;
  /**
   * The run queue's recovery (QueueSweep, then the dispatches it woke): every account with
   * queued runs has its dispatcher run, which starts them while slots are free. Resolves with
   * how many accounts it woke, once their dispatch is done. Absent: no recovery here.
   */
  sweepQueues?: () => Promise<number>;
  /** Profiles' states and records: a run ended here gives its profiles' leases back and its unadopted saves go (absent: runs hold none). */
  profiles?: ReleaseDeps["profiles"];
  /** Deletes the waiting routes' wait queues nobody uses any more (runEnds/sweepWaitQueues.ts); absent: none are. */
  sweepWaitQueues?: WaitQueueSweep;
  /**
   * Tells the route waiting for a run that the end written here (an execution that failed, timed
   * out or was stopped by a cancel) is written: to the wait queue the execution's input names
   * (runEnds/notifyRunEnd.ts). Absent: nobody is told (the route reads the record at its window's end).
   */
  notifyEnd?: RunEndNotifier;
}

/** Outbox entries older than this are the sweeper's to queue (younger ones may still be on their way). */
const WEBHOOK_RECONCILE_AGE_MS = 2 * 60_000;

/** Overdue runs settled per sweep at most; the next sweep takes the rest. */
export const SWEEP_BATCH = 200;

/**
 * What the sweeper Lambda is invoked with: its schedule, an execution that ended unrecorded, or
 * a deploy job Lambda gave up on (the deploy-job Lambda's on-failure destination).
 */
export type SweepEvent =
  | { "detail-type": "Scheduled Event" }
  | { requestContext: { condition?: unknown; functionArn?: unknown }; requestPayload?: unknown; responsePayload?: unknown }
  | {
      "detail-type": "Step Functions Execution Status Change";
      detail: { name?: unknown; status?: unknown; error?: unknown; cause?: unknown; startDate?: unknown; stopDate?: unknown; input?: unknown };
    };

/**
 * The run sweeper: the last line that keeps any run from staying active forever.
 * - Every few minutes (an EventBridge schedule) it settles each run still queued or running
 *   past its deadline (`deadline_at`: the function's timeout plus RUN_DEADLINE_MARGIN_MS, later
 *   than any run workflow can last): ended `failed` / `function_crashed`, metered, its lease
 *   given back (settleRun). Found through the store's index of active runs, not a scan. How
 *   many it ended goes to `sweptRuns` (a CloudWatch metric with an alarm on AWS).
 * - When a run workflow's execution fails, times out or is stopped (EventBridge's status-change
 *   event), it ends that run at once with the execution's error (recordExecutionEnd), and tells
 *   the route waiting for it, if any, as the recorder does (`notifyEnd`: the queue the event's
 *   input names). A cancel stops the execution, so a canceled run's caller is told from here.
 * - When Lambda gives up on a deploy job (it threw on every attempt, or waited too long), the
 *   function it deployed is recorded `failed` instead of staying `deploying` (recordFailedDeployJob).
 * - Every few minutes it also records `failed` each function `deploying` past STALE_DEPLOY_MS
 *   (failStuckDeploys): the deploy whose job was never queued, or whose failure event was lost.
 * - Every few minutes it recovers the run queue (`sweepQueues`): accounts with queued runs
 *   (their sparse QUEUED entry) have their dispatcher run, which starts what a stopped
 *   dispatcher left queued while their plan has free slots.
 * - Every few minutes it deletes the wait queues no route container uses any more
 *   (`sweepWaitQueues`; a failure is logged, and the next sweep tries again).
 * Store failures throw: EventBridge retries the event, and the next sweep finds what is left.
 */
export function makeRunSweeper(deps: SweepDeps) {
  return async (event: SweepEvent): Promise<{ settled: number; stuck_deploys?: number; queued_accounts?: number; wait_queues_deleted?: number }> => {
    if ("requestContext" in event) {
      const why = `${String(event.requestContext?.condition ?? "failed")}: ${JSON.stringify(event.responsePayload ?? null)}`;
      return { settled: (await recordFailedDeployJob(deps, event.requestPayload, why)) === "failed" ? 1 : 0 };
    }
    if (event["detail-type"] === "Step Functions Execution Status Change") {
      const { detail } = event;
      if (typeof detail?.name !== "string" || typeof detail.status !== "string") return { settled: 0 };
      const text = (value: unknown) => (typeof value === "string" ? value.slice(0, 4000) : null);
      const time = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : undefined);
      const status = await recordExecutionEnd(deps, {
        name: detail.name,
        status: detail.status,
        error: text(detail.error),
        cause: text(detail.cause),
        startDate: time(detail.startDate),
        stopDate: time(detail.stopDate),
      });
      deps.log(`run sweeper: the workflow of ${detail.name} ended ${detail.status}; the run is ${status}`);
      // Its caller may still wait (a sync call): told as the recorder tells it.
      const { runId } = runOfExecution(detail.name);
      const notify = FINAL_STATUSES.includes(status as RunStatus) ? notifyOfExecutionInput(detail.input, runId) : null;
      if (notify) await deps.notifyEnd?.(notify, runId);
      return { settled: status === "unknown" ? 0 : 1 };
    }
    const now = deps.clock.now();
    let settled = 0;
    for (const run of await deps.store.runs.listOverdue(now, SWEEP_BATCH)) {
      const error = {
        code: "function_crashed",
        message: `No end of the run was recorded by its deadline (${run.deadline_at}): the workflow that ran it ended without recording it`,
      };
      const outcome = await settleRun(deps.store, deps.clock, run, error, deps.webhooks);
      if (outcome === "ended") settled++;
      if (outcome === "ended" && deps.profiles) await releaseRunProfiles(deps.profiles, run.run_id, run.attempt ?? 1);
      deps.log(`run sweeper: run ${run.run_id} (${run.status}, due ${run.deadline_at}): ${outcome}`);
    }
    // Each sweep reports, 0 included: a run ended here is one its workflow lost (an alarm watches).
    deps.sweptRuns?.(settled);
    // Ends whose webhook deliveries were never queued (a recorder that stopped right after the end).
    const reconciled = await deps.webhooks?.reconcile(WEBHOOK_RECONCILE_AGE_MS);
    if (reconciled) deps.log(`run sweeper: queued the webhook deliveries of ${reconciled} ended run(s) left in the outbox`);
    const stuck = await failStuckDeploys(deps, now);
    // Queued runs that no release woke (a dispatcher that stopped between a release and a start).
    const queues = (await deps.sweepQueues?.()) ?? 0;
    if (queues > 0) deps.log(`run sweeper: dispatched the run queues of ${queues} account(s) with queued runs`);
    const waitQueues = await (deps.sweepWaitQueues?.() ?? Promise.resolve(0)).catch((error: unknown) => {
      deps.log(`run sweeper: sweeping the wait queues failed: ${(error as Error).message}`);
      return 0;
    });
    if (waitQueues > 0) deps.log(`run sweeper: deleted ${waitQueues} idle wait queue(s)`);
    return {
      settled,
      ...(stuck > 0 ? { stuck_deploys: stuck } : {}),
      ...(queues > 0 ? { queued_accounts: queues } : {}),
      ...(waitQueues > 0 ? { wait_queues_deleted: waitQueues } : {}),
    };
  };
}
