import type { FinishRunDeps } from "../finishRun";
import { endedRun } from "../finishRun";
import type { RunItem } from "../types";
import { canceledEnding } from "./canceledEnding";

/**
 * Records `run` canceled by a conditional write on its stored status being `expected` (a queued
 * run that has not started, or a running one whose code does not run here), with the
 * `run.canceled` webhook deliveries it owes in the same write; then queues them and meters it:
 * one invocation, the execution it had by the service's clock (none for a queued run).
 * Null when the stored run's status was not `expected` any more (nothing written).
 */
export async function recordCanceled(deps: FinishRunDeps, run: RunItem, expected: "queued" | "running"): Promise<RunItem | null> {
  const now = deps.clock.now();
  const final = endedRun(run, canceledEnding(run, now), now.toISOString());
  const pending = (await deps.webhooks?.pendingFor(final)) ?? [];
  if (!(await deps.store.runs.putIfStatus(final, expected, pending))) return null;
  if (pending.length > 0) await deps.webhooks?.runEnded(final, pending);
  await deps.store.meters.recordRun(final).catch((error: unknown) => deps.log(`metering run ${final.run_id} failed: ${(error as Error).message}`));
  return final;
}
