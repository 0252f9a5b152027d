import type { Deps } from "../deps";
import type { FunctionItem } from "../functions/types";
import { runLease } from "../invoke/admitRun";
import { launchRun } from "../invoke/launchRun";
import type { RunItem } from "../runs/types";
import { secretsForRun } from "../secrets/functionSecrets";
import { Redactor } from "../secrets/redactor";
import type { QueuedRun } from "./queueItems";

/**
 * Hands a run taken out of the queue (its lease held) to the runtime, as startRun does for a
 * run admitted at once; resolves once the runtime has it. Nobody waits here for its end: it is
 * recorded as any run's (finishRun), a caller waiting in this process gets it (RunQueueState),
 * and its lease's release wakes the queue again.
 */
export async function startQueuedRun(deps: Deps, queued: QueuedRun, record: RunItem, fn: FunctionItem, plan: string): Promise<void> {
  const secrets = await secretsForRun(deps, fn.function_id, fn.has_secrets === true);
  // Nobody waits here for its end: a runtime that records runs itself (AWS) does not watch the
  // run at all (no read of its record), one that records them through its caller (local) ignores this.
  const watching = new AbortController();
  watching.abort();
  await launchRun(deps, {
    run: record,
    fn,
    params: queued.params,
    secrets,
    redactor: new Redactor(Object.values(secrets.values)),
    // Its lease set the queue's cursor to its function: the next run is looked up beside its release.
    lease: runLease(deps, queued.account_id, queued.run_id, plan, { functionId: queued.function_id }),
    waitMs: 0,
    signal: watching.signal,
    baseUrl: queued.base_url,
    markRunning: "at-start",
    fromQueue: true,
    // The sync call that queued it may still wait for it elsewhere: its end is told there.
    notify: queued.notify ?? null,
  });
}
