import type { Deps } from "../deps";
import { wakeQueue } from "./dispatchQueue";

/**
 * The run queue's recovery, run at start-up and every few seconds to minutes (locally a timer;
 * on AWS the sweeper): wakes the dispatcher of every account that has queued runs (found
 * through the sparse QUEUED entry, never by reading queued runs one by one), which recovers a
 * dispatcher that died between a release and a start. It also corrects an account's `queued`
 * count that disagrees with its queue items (a process that died between counting a run in
 * and writing its item), once the same disagreement is seen on two sweeps in a row (a run
 * being queued right now disagrees for a moment too).
 */
export class QueueSweep {
  private readonly seen = new Map<string, string>();

  constructor(private readonly deps: Deps) {}

  async sweep(): Promise<number> {
    const accounts = await this.deps.store.queueCounts.accountsWithQueued();
    const disagreeing = new Map<string, string>();
    for (const account of accounts) {
      const counted = (await this.deps.store.limits.read(account))?.queued ?? 0;
      const actual = await this.deps.store.queueItems.count(account);
      if (counted !== actual) {
        const key = `${counted}/${actual}`;
        if (this.seen.get(account) === key) {
          if (await this.deps.store.queueCounts.correct(account, counted, actual)) {
            this.deps.log(`run queue of ${account}: its count said ${counted} queued runs, ${actual} are; corrected`);
          }
        } else disagreeing.set(account, key);
      }
      wakeQueue(this.deps, account);
    }
    this.seen.clear();
    for (const [account, key] of disagreeing) this.seen.set(account, key);
    return accounts.length;
  }
}
