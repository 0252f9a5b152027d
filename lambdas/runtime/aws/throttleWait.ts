import { copyRun } from "../../runs/copyRun";
import { runDeadline, type RunItem } from "../../runs/types";
import type { Store } from "../../store/store";
import type { RecordRunAnswer } from "./runWorkflow";

/**
 * How a run that waits as long as needed (a scheduled firing, a batch item) rides out Lambda's
 * own throttle (the account's Lambda concurrency, not the plan's): once the workflow's quick
 * throttle retries (about 30 s) ran out, it waits `waitMs` and invokes again, for at most
 * `limitMs` from the run's first start; only then does it fail `concurrency_limit_exceeded`.
 */
export const LAMBDA_THROTTLE_WAIT = { waitMs: 60_000, limitMs: 30 * 60_000 } as const;

/** Runs whose caller does not wait for them: they wait for Lambda instead of failing. */
const WAITING_TRIGGERS: readonly RunItem["trigger"][] = ["schedule", "batch"];

/** True when the run, throttled by Lambda past the workflow's quick retries, should wait and be invoked again. */
export function waitsOutThrottle(run: RunItem, now: Date, limitMs: number = LAMBDA_THROTTLE_WAIT.limitMs): boolean {
  if (!WAITING_TRIGGERS.includes(run.trigger) || run.status !== "running") return false;
  const first = Date.parse(run.started_at ?? run.queued_at);
  return now.getTime() - first < limitMs;
}

/**
 * Keeps the run going while Lambda is throttled: its deadline moves past the next round (the
 * sweeper never ends a run its workflow still waits on; a write conditional on the run being
 * active, so a run canceled meanwhile stays canceled), and the workflow is told to wait until
 * `retry_at` and invoke the function again (runWorkflow.ts, WaitLambda and Reinvoke). Its
 * lease stays taken: the run is admitted, only Lambda has no room. Undefined when the run
 * ended meanwhile (the caller records the throttle's ending, which keeps that end).
 */
export async function waitOutThrottle(
  deps: { store: Pick<Store, "runs">; log: (line: string) => void },
  run: RunItem,
  now: Date,
  timeoutSeconds: number,
  waitMs: number = LAMBDA_THROTTLE_WAIT.waitMs,
): Promise<RecordRunAnswer | undefined> {
  const retryAt = new Date(now.getTime() + waitMs).toISOString();
  const moved: RunItem = { ...copyRun(run), deadline_at: runDeadline(retryAt, timeoutSeconds) };
  if (!(await deps.store.runs.putIfActive(moved))) return undefined;
  deps.log(`run ${run.run_id}: Lambda is throttled; its workflow invokes it again at ${retryAt}`);
  return { status: run.status, retry_at: retryAt, account_id: null, reinvoke: true };
}
