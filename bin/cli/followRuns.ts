import type { LogEntry } from "../../client";

const ended = (entry: LogEntry) => entry.status !== "queued" && entry.status !== "running";

/**
 * Which log entries `logs --follow` prints: each run once, once it has ended, oldest first.
 *
 * It remembers the ended runs it has printed, or found ended when it started, but only while
 * they are in the latest page: an ended run only moves down the list (newest first), so one
 * that has left the page never comes back. Memory is one page of run ids, however long it
 * follows. The first page must be at least as long as the later ones, or runs older than a
 * shorter first page would show as new.
 */
export class RunFollower {
  private known: Set<string>;

  /** `first`: the page the command started from (its ended runs are not printed as new). */
  constructor(first: LogEntry[]) {
    this.known = new Set(first.filter(ended).map((entry) => entry.run_id));
  }

  /** How many run ids it holds (at most one page's worth). */
  get remembered(): number {
    return this.known.size;
  }

  /** The entries of `page` (newest first, as the API lists them) to print now, oldest first. */
  next(page: LogEntry[]): LogEntry[] {
    const fresh = page.filter((entry) => ended(entry) && !this.known.has(entry.run_id)).reverse();
    const inPage = new Set(page.map((entry) => entry.run_id));
    this.known = new Set([...this.known].filter((runId) => inPage.has(runId)));
    for (const entry of fresh) this.known.add(entry.run_id);
    return fresh;
  }
}
