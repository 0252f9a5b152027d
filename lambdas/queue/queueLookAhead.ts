import type { Deps } from "../deps";
import type { QueuedRun } from "./queueItems";

/**
 * The queue's next ready run, looked up ahead (beside the write that frees a slot) from the
 * round-robin cursor `cursor`. The dispatcher uses the answer only in its first loop and only
 * when the freed slot's item still has that cursor (else it queries again): the lookup is then
 * the one it would have made. A run another dispatcher takes meanwhile is handled as in any
 * race (its lease is given back when the claim loses); a failed lookup only costs the query.
 */
export interface LookAhead {
  cursor: string | null;
  result: Promise<{ run?: QueuedRun; earliest?: string } | undefined>;
}

export function lookUpNext(deps: Deps, accountId: string, cursor: string | null): LookAhead {
  const result = deps.store.queueItems.next(accountId, cursor, deps.clock.now()).catch(() => undefined);
  return { cursor, result };
}
