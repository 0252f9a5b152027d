import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { access, mkdir, readFile, rmdir, writeFile } from "node:fs/promises";
import { getPriority, setPriority } from "node:os";
import path from "node:path";
import { removeGroupsOfGoneServices } from "../sandbox/cgroup";
import type { CpuShares } from "./cpuShares";

/** cgroup v1's cpu controller. */
const ROOT = "/sys/fs/cgroup/cpu";
/** Where the accounts' groups are made (one level below the root, as the memory groups are). */
const PARENT = "browserfn";
/** One account's weight: the kernel's default for a group, as much as one task at nice 0. */
export const ACCOUNT_SHARES = 1024;
/** Every account's sandboxes together (`browserfn/`): as much as one of the service's own threads. */
export const SANDBOXES_SHARES = 1024;

/** The group of the service's own process (its every thread) and its store's (dynalite), beside `browserfn/`. */
export const SERVICE_GROUP = "browserfn-service";
/**
 * Its weight: four tasks' against every account's code together (SANDBOXES_SHARES). The work every
 * account waits on (serving requests, the store) comes first under contention, and, weighing
 * more, is woken ahead of accounts' code. Shares only count under contention: an idle service
 * takes nothing from runs.
 */
export const SERVICE_SHARES = 4096;

/**
 * The group of the service's background threads (the deploys' readers), beside `browserfn/`:
 * marked `cpu.idle` (the kernel's SCHED_IDLE for a group): it gets only CPU nothing else wants,
 * and anything else that wakes takes a CPU from it at once.
 */
export const BACKGROUND_GROUP = "browserfn-background";

/**
 * cgroup v1's cpuset controller, where the background group (BACKGROUND_GROUP, the same name) is
 * kept off the machine's first CPU: `cpu.idle` alone lets anything that wakes take a core from a
 * reading at once, but with two readings busy on this 2-core machine every wake-up of another
 * account's call (its request, the store, its worker) still found both cores taken, paid a
 * switch and cache the reading had filled, and its p50 was 1.5–1.8× the idle figure against
 * 1.16× with one reading at a time (docs/benchmarks.md, session 16). With the readings on every
 * CPU but one, one core is always free of them.
 */
const CPUSET_ROOT = "/sys/fs/cgroup/cpuset";

/**
 * The CPUs background work may use, as cpuset.cpus writes them: every CPU of `cpus` (a cpuset
 * list: "0-3,8") but the first; undefined with one CPU (nothing to leave free).
 */
export function backgroundCpus(cpus: string): string | undefined {
  const all = cpuList(cpus);
  return all.length < 2 ? undefined : all.slice(1).join(",");
}

/** The CPUs of a kernel CPU list ("0-3,8", as cpuset.cpus and Cpus_allowed_list write it), one by one. */
export function cpuList(text: string): number[] {
  return text
    .trim()
    .split(",")
    .filter((range) => range !== "")
    .flatMap((range) => {
      const [from, to = from] = range.split("-").map(Number) as [number, number?];
      return Number.isInteger(from) && Number.isInteger(to) ? Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i) : [];
    });
}

/** A service thread's nice level while it works for an account, in the account's group (charge). */
export const CHARGED_NICE = -5;

/** The cpu group of one of this process's threads, as /proc names it (undefined when it cannot be read). */
export function cpuGroupOfThread(threadId: number): string | undefined {
  return cpuGroupAt(`/proc/self/task/${threadId}`);
}

/** The cpu group of the process or thread at `procPath` (`/proc/<pid>`, `/proc/<pid>/task/<tid>`), as /proc names it (undefined once it is gone). */
export function cpuGroupAt(procPath: string): string | undefined {
  try {
    return /^\d+:(?:[^:]*,)?cpu(?:,[^:]*)?:(.*)$/m.exec(readFileSync(`${procPath}/cgroup`, "utf8"))?.[1];
  } catch {
    return undefined;
  }
}

/**
 * Makes the background cpuset (BACKGROUND_GROUP under CPUSET_ROOT) on every CPU but the first
 * (backgroundCpus): its `tasks` file, or null where it cannot be made or would leave nothing
 * free. Made once and kept, like the cpu group of the same name.
 */
async function makeBackgroundCpuset(): Promise<string | null> {
  try {
    const cpus = backgroundCpus(await readFile(path.join(CPUSET_ROOT, "cpuset.effective_cpus"), "utf8"));
    if (cpus === undefined) return null;
    const dir = path.join(CPUSET_ROOT, BACKGROUND_GROUP);
    await mkdir(dir, { recursive: true });
    // A cpuset takes tasks only once it has memory nodes and CPUs.
    await writeFile(path.join(dir, "cpuset.mems"), (await readFile(path.join(CPUSET_ROOT, "cpuset.effective_mems"), "utf8")).trim());
    await writeFile(path.join(dir, "cpuset.cpus"), cpus);
    return path.join(dir, "tasks");
  } catch {
    return null;
  }
}

/** True when one of this process's threads is in the background group now (as /proc says: a thread id the kernel gave again is a new thread). */
function inBackground(threadId: number): boolean {
  return cpuGroupOfThread(threadId) === `/${BACKGROUND_GROUP}`;
}

/** Services in this process (a test may run several): part of each group's name, so none shares another's. */
let servicesStarted = 0;

/**
 * A cgroup v1 `cpu` group per account, `browserfn/<service pid>-<n>-<account>-<hash>`, each with the
 * same `cpu.shares`: an account's sandboxes (every process of them: the kernel puts a child
 * in its parent's group) get together the CPU of one account, however many runs it keeps busy.
 * `browserfn/` itself, every account's code together, weighs as one task (SANDBOXES_SHARES)
 * against the service's own threads and its store (dynalite), each of which weighs as much: when
 * the CPU is contended, the work every account waits on (serving requests, the store) comes before
 * any account's code, and accounts' code shares what is left. Before, `browserfn/` weighed one
 * task per account group, so a busy account's runs kept the request thread and the store waiting
 * for the CPU, and every other account's calls with them (docs/benchmarks.md, "A poisoned
 * webhook"). Shares only count under contention: on an idle machine a run may use every core.
 * A group is removed once its account has no sandbox left.
 */
export class CgroupCpuShares implements CpuShares {
  readonly kind = "cgroup" as const;
  private readonly prefix = `${process.pid}-${++servicesStarted}-`;
  private readonly sandboxes = new Map<string, number>();
  /** The service's threads moved so far (a handful: the result thread, the deploys' readers): their own group and level. */
  private readonly threads = new Map<number, { group: string; level: number }>();
  private backgroundMade = false;
  /** The background cpuset's `tasks` (made at the first background move), or null where there is none to make (one CPU, no cpuset controller). */
  private backgroundCpuset: Promise<string | null> | undefined;

  /** True when this process can make cpu groups here (root, with cgroup v1's cpu controller mounted). */
  static async available(): Promise<boolean> {
    if (process.getuid?.() !== 0) return false;
    return access(path.join(ROOT, "cpu.shares")).then(
      () => true,
      () => false,
    );
  }

  /** Makes `browserfn/`, weighs it (SANDBOXES_SHARES) and removes the empty groups of services that are gone. */
  static async prepare(): Promise<void> {
    await mkdir(path.join(ROOT, PARENT), { recursive: true });
    await writeFile(path.join(ROOT, PARENT, "cpu.shares"), String(SANDBOXES_SHARES));
    await removeGroupsOfGoneServices(path.join(ROOT, PARENT));
  }

  /**
   * Puts this process (all its threads; the processes it starts from now on are born there too)
   * in SERVICE_GROUP. For a service that is a process of its own (`npm start`): without it, the
   * service, its store and whatever else its session started share one autogroup, which weighs
   * as one task against all of `browserfn/`. The service moves what it starts for an account
   * (sandboxes, their network helper) into that account's group; its threads working for an
   * account (a result, a deploy's reading) go there for the job (charge).
   */
  static async placeService(): Promise<void> {
    const dir = path.join(ROOT, SERVICE_GROUP);
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, "cpu.shares"), String(SERVICE_SHARES));
    await writeFile(path.join(dir, "cgroup.procs"), String(process.pid));
  }

  async background(threadId: number): Promise<void> {
    // A reading's thread still in the background from its last reading: nothing to write (each move by id costs the writer a grace period of the kernel's).
    if (!this.own(threadId) || inBackground(threadId)) return;
    const dir = path.join(ROOT, BACKGROUND_GROUP);
    if (!this.backgroundMade) {
      await mkdir(dir, { recursive: true });
      // Kernels before 5.15 have no cpu.idle: the least weight instead.
      await writeFile(path.join(dir, "cpu.idle"), "1").catch(() => writeFile(path.join(dir, "cpu.shares"), "2"));
      this.backgroundMade = true;
    }
    await writeFile(path.join(dir, "tasks"), String(threadId));
    const cpuset = await (this.backgroundCpuset ??= makeBackgroundCpuset());
    // A thread gone meanwhile (the service stopping) has nothing left to keep off a core.
    if (cpuset) await writeFile(cpuset, String(threadId)).catch(() => undefined);
  }

  forget(threadId: number): void {
    this.threads.delete(threadId);
  }

  /** Where a thread of the service was, and its level, before it was first moved (undefined: it cannot be read, not moved). */
  private own(threadId: number): { group: string; level: number } | undefined {
    let own = this.threads.get(threadId);
    if (!own) {
      const group = cpuGroupOfThread(threadId);
      if (group === undefined) return undefined;
      own = { group, level: getPriority(threadId) };
      this.threads.set(threadId, own);
    }
    return own;
  }

  /** The group of an account's sandboxes (for tests and diagnostics), as /proc/<pid>/cgroup names it. */
  groupOf(accountId: string): string {
    const hash = createHash("sha256").update(accountId).digest("hex").slice(0, 12);
    return `/${PARENT}/${this.prefix}${accountId.replace(/[^A-Za-z0-9_]/g, "_").slice(0, 64)}-${hash}`;
  }

  async place(accountId: string, pids: readonly number[]): Promise<() => Promise<void>> {
    return this.enter(accountId, pids, "cgroup.procs");
  }

  /**
   * The thread weighs in the account's group at CHARGED_NICE (as one of its processes, a little
   * more: the account's own busy sandboxes do not keep its result waiting, and the thread, shared
   * by every account, is back for the next one sooner), and is back in its own group at its own
   * level once released. The account's group is held meanwhile, as a sandbox holds it.
   */
  async charge(accountId: string, threadId: number): Promise<() => Promise<void>> {
    // Where it was, and its level, before it was first moved: a charge made before the last one's
    // release landed must not take the account's group or CHARGED_NICE for the thread's own.
    const own = this.own(threadId);
    if (!own) return async () => undefined;
    const { group: home, level } = own;
    if (inBackground(threadId)) {
      // Out of the background: every CPU again (the thread's own cpuset, the root one, as the service's).
      await writeFile(path.join(CPUSET_ROOT, "tasks"), String(threadId)).catch(() => undefined);
    }
    const release = await this.enter(accountId, [threadId], "tasks");
    try {
      setPriority(threadId, CHARGED_NICE);
    } catch {
      // Gone already: nothing runs there.
    }
    return async () => {
      try {
        await writeFile(path.join(ROOT, home, "tasks"), String(threadId));
        setPriority(threadId, level);
      } catch {
        // The thread is gone (the service is stopping): nothing of it is left in the group.
      }
      await release();
    };
  }

  /** Puts `ids` (processes by `cgroup.procs`, a thread by `tasks`) in `accountId`'s group, made if needed, held until the release. */
  private async enter(accountId: string, ids: readonly number[], file: "cgroup.procs" | "tasks"): Promise<() => Promise<void>> {
    this.sandboxes.set(accountId, (this.sandboxes.get(accountId) ?? 0) + 1);
    const dir = path.join(ROOT, this.groupOf(accountId));
    for (let attempt = 1; ; attempt++) {
      try {
        await mkdir(dir, { recursive: true });
        await writeFile(path.join(dir, "cpu.shares"), String(ACCOUNT_SHARES));
        for (const id of ids) await writeFile(path.join(dir, file), String(id));
        break;
      } catch (error) {
        // The account's last sandbox before this one was removing the group just then: made again.
        if ((error as NodeJS.ErrnoException).code === "ENOENT" && attempt < 3) continue;
        await this.release(accountId, dir);
        throw error;
      }
    }
    let released = false;
    return async () => {
      if (released) return;
      released = true;
      await this.release(accountId, dir);
    };
  }

  /** One sandbox of the account gone: its group is removed when it was the last (the kernel refuses while a process of it is still exiting: tried a little longer). */
  private async release(accountId: string, dir: string): Promise<void> {
    const left = (this.sandboxes.get(accountId) ?? 1) - 1;
    if (left > 0) return void this.sandboxes.set(accountId, left);
    this.sandboxes.delete(accountId);
    for (let attempt = 0; attempt < 50; attempt++) {
      // Another sandbox of the account started meanwhile: the group is its own now.
      if (this.sandboxes.has(accountId)) return;
      const removed = await rmdir(dir).then(
        () => true,
        (error: NodeJS.ErrnoException) => error.code === "ENOENT",
      );
      if (removed) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}
