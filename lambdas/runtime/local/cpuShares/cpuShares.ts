/**
 * CPU shares per account for the local runtime's sandboxes: every process of an account's
 * workers (their hosts, worker processes and browsers) weighs together as much as one other
 * account's, however many runs it keeps busy. Two adapters: cgroup v1's `cpu` controller
 * (cgroupCpuShares.ts, as root) and nice levels by the account's load (niceCpuShares.ts).
 */

/** How the machine lets the service weigh accounts' CPU: a cgroup per account, or nice levels only. */
export type CpuSharesKind = "cgroup" | "nice";

export interface CpuShares {
  readonly kind: CpuSharesKind;
  /**
   * Puts a new sandbox's first processes (their later children follow) under `accountId`'s
   * share. Resolves to its release, called once the sandbox is gone.
   */
  place(accountId: string, pids: readonly number[]): Promise<() => Promise<void>>;
  /**
   * Puts one of the service's own threads (its Linux thread id), about to do costly work for
   * `accountId` (its result parsed, gzipped, a webhook body built: resultParser.ts), under that
   * account's share, so the service's work for an account counts against the account's CPU as
   * its runs do. Resolves to its release: the thread back where it was. Nothing where shares are
   * nice levels (the thread keeps its own level).
   */
  charge(accountId: string, threadId: number): Promise<() => Promise<void>>;
  /**
   * Makes one of the service's threads (its Linux thread id) background work until it is moved
   * again (charge, or a charge's release):
   * it runs only on CPU that nothing else wants, whatever else wakes takes the CPU from it at
   * once, and, with cgroups on a machine of two CPUs or more, never on the first, which stays
   * free of background work (a deploy's reading: analysisPool.ts). Nothing where shares are nice
   * levels (the thread keeps its own level, 10).
   */
  background(threadId: number): Promise<void>;
  /**
   * One of the service's threads that `background` or `charge` moved has ended: what was kept of
   * it goes (the kernel may give its id to a new thread, whose own group and level are its own).
   */
  forget?(threadId: number): void;
}

/**
 * The nice level every sandbox starts at, at least, where shares are nice levels: the service's
 * own threads (at 0) weigh about three times as much as one sandbox (CFS weighs each level 1.25×
 * less than the one below), so the work every account waits on comes first, as `browserfn/`'s
 * weight does with cgroups (cgroupCpuShares.ts).
 */
export const SANDBOX_NICE = 5;

/**
 * The nice level that makes `sandboxes` busy sandboxes of one account weigh together about as
 * much as one sandbox at level 0: the kernel weighs each level 1.25× less than the one below
 * (CFS's prio_to_weight table), capped at 19.
 */
export function niceForLoad(sandboxes: number): number {
  if (sandboxes <= 1) return 0;
  return Math.min(19, Math.round(Math.log(sandboxes) / Math.log(1.25)));
}
