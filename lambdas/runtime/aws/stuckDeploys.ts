import { isDeployStuck, STALE_DEPLOY_MS } from "../../functions/startDeploy";
import type { Store } from "../../store/store";

/** The status_reason of a function whose deploy was lost (see failStuckDeploys). */
export const STUCK_DEPLOY_REASON = "The deploy did not finish (it was interrupted, or its deploy job never ended); send the code again to retry";

/** Stuck deploys recorded per sweep at most; the next sweep takes the rest. */
export const STUCK_DEPLOY_BATCH = 100;

/**
 * Records `failed` each function `deploying` for longer than STALE_DEPLOY_MS: no deploy job can
 * be at work on it or still to come (a route handler that stopped before queueing its job, a
 * job whose failure event was lost), so it would stay `deploying` until its code is sent
 * again. Found through the deploying index, not a scan. The write is conditional on the deploy
 * (deploy_id): a resend meanwhile keeps its own.
 */
export async function failStuckDeploys(deps: { store: Pick<Store, "functions">; log: (line: string) => void }, now: Date): Promise<number> {
  let failed = 0;
  for (const fn of await deps.store.functions.listDeployingSince(new Date(now.getTime() - STALE_DEPLOY_MS), STUCK_DEPLOY_BATCH)) {
    // Changed since its index entry was read: not stuck any more.
    if (!isDeployStuck(fn, now)) continue;
    if (!(await deps.store.functions.setStatus(fn, "failed", STUCK_DEPLOY_REASON, true))) continue;
    failed++;
    deps.log(`run sweeper: ${fn.function_id} v${fn.latest_version} was deploying since ${fn.updated_at}: recorded failed`);
  }
  return failed;
}
