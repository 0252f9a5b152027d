import { getPriority, setPriority } from "node:os";
import { type CpuShares, SANDBOX_NICE, niceForLoad } from "./cpuShares";

/**
 * The fallback where cgroups cannot be made (not root, or no cgroup v1 `cpu` controller): a new
 * sandbox's first processes get SANDBOX_NICE plus the nice level of its account's load (its live
 * sandboxes, this one included; niceForLoad), and the processes they start inherit it. Weaker than a
 * cgroup: a level is set once, when the sandbox starts, so an account's earlier sandboxes keep
 * the lower level they started with.
 */
export class NiceCpuShares implements CpuShares {
  readonly kind = "nice" as const;
  private readonly sandboxes = new Map<string, number>();

  async place(accountId: string, pids: readonly number[]): Promise<() => Promise<void>> {
    const count = (this.sandboxes.get(accountId) ?? 0) + 1;
    this.sandboxes.set(accountId, count);
    const level = SANDBOX_NICE + niceForLoad(count);
    for (const pid of pids) {
      try {
        // On top of what it inherited from the service (nice levels only go up without privileges).
        if (level > 0) setPriority(pid, Math.min(19, getPriority(pid) + level));
      } catch {
        // gone already, or not ours to change: it runs at the level it has
      }
    }
    let released = false;
    return async () => {
      if (released) return;
      released = true;
      const left = (this.sandboxes.get(accountId) ?? 1) - 1;
      if (left > 0) this.sandboxes.set(accountId, left);
      else this.sandboxes.delete(accountId);
    };
  }

  /** Nothing: a nice level is a thread's own, and the service's threads keep theirs (the result thread's is 10). */
  async charge(): Promise<() => Promise<void>> {
    return async () => undefined;
  }

  /** Nothing: the thread keeps its own level (the deploys' readers run at 10). */
  async background(): Promise<void> {}
}
