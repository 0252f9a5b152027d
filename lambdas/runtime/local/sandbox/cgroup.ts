import { readFileSync } from "node:fs";
import { mkdir, readFile, readdir, rmdir, writeFile } from "node:fs/promises";
import path from "node:path";

const ROOT = "/sys/fs/cgroup";
const CONTROLLERS = ["memory", "pids"] as const;
/** Where workers' groups are made, one level below each controller's root. */
const PARENT = "browserfn";
/** Processes (threads count) one worker's sandbox may have: a browser needs a few hundred threads. */
const PIDS_MAX = 1024;

/**
 * One worker's cgroup (v1) in the memory and pids controllers, under `browserfn/`: a hard
 * memory ceiling, a process cap, and a list of every process the sandbox started, whatever it
 * did to its process group. (Runs are paused between runs with SIGSTOP, not the freezer: a
 * frozen task takes no SIGKILL, so a sandbox frozen when the service died would stay forever.)
 */
export class WorkerCgroup {
  private memoryLimit: number | undefined;

  private constructor(private readonly name: string) {}

  /** True when this process can make cgroups here (root, with v1 controllers mounted). */
  static async available(): Promise<boolean> {
    if (process.getuid?.() !== 0) return false;
    try {
      for (const controller of CONTROLLERS) await readFile(path.join(ROOT, controller, "cgroup.procs"), "utf8");
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Removes the empty groups of services that are gone (a service killed with SIGKILL leaves its
   * workers' groups behind; the kernel keeps a group until it is removed).
   */
  static async removeStale(): Promise<void> {
    for (const controller of CONTROLLERS) await removeGroupsOfGoneServices(path.join(ROOT, controller, PARENT));
  }

  static async create(id: string): Promise<WorkerCgroup> {
    const group = new WorkerCgroup(path.join(PARENT, id));
    for (const controller of CONTROLLERS) await mkdir(group.dir(controller), { recursive: true });
    await writeFile(path.join(group.dir("pids"), "pids.max"), String(PIDS_MAX));
    return group;
  }

  /** Moves processes into the group (their later children are born in it). */
  async add(...pids: number[]): Promise<void> {
    for (const controller of CONTROLLERS) {
      for (const pid of pids) await writeFile(path.join(this.dir(controller), "cgroup.procs"), String(pid)).catch(() => undefined);
    }
  }

  /** The ceiling of memory and page cache (MB) past which the kernel kills in the sandbox (written when it changes). */
  async limitMemory(mb: number): Promise<void> {
    const bytes = Math.round(mb * 1024 * 1024);
    if (bytes === this.memoryLimit) return;
    await writeFile(path.join(this.dir("memory"), "memory.limit_in_bytes"), String(bytes)).then(
      () => (this.memoryLimit = bytes),
      () => undefined,
    );
  }

  /** True once the kernel refused memory to the sandbox (its ceiling was hit). */
  async hitMemoryLimit(): Promise<boolean> {
    const failures = await readFile(path.join(this.dir("memory"), "memory.failcnt"), "utf8").catch(() => "0");
    return Number(failures.trim()) > 0;
  }

  async pids(): Promise<number[]> {
    const text = await readFile(path.join(this.dir("pids"), "cgroup.procs"), "utf8").catch(() => "");
    return text.split("\n").filter(Boolean).map(Number);
  }

  /** The group's processes now, read synchronously (a few µs: one small file); undefined when it cannot be read. */
  pidsNow(): number[] | undefined {
    try {
      return readFileSync(path.join(this.dir("memory"), "cgroup.procs"), "utf8").split("\n").filter(Boolean).map(Number);
    } catch {
      return undefined;
    }
  }

  /** Kills every process in the group and removes it. */
  async destroy(): Promise<void> {
    for (let attempt = 0; attempt < 100; attempt++) {
      const pids = await this.pids();
      for (const pid of pids) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // ended meanwhile
        }
      }
      if (pids.length === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    for (const controller of CONTROLLERS) await rmdir(this.dir(controller)).catch(() => undefined);
  }

  private dir(controller: (typeof CONTROLLERS)[number]): string {
    return path.join(ROOT, controller, this.name);
  }
}

/**
 * Removes the groups in `parent` (named `<service pid>-…`) of services that are gone: a service
 * killed with SIGKILL leaves its groups behind, and the kernel keeps a group until it is removed.
 * A group still holding a process is left (the kernel refuses to remove it).
 */
export async function removeGroupsOfGoneServices(parent: string): Promise<void> {
  for (const name of await readdir(parent).catch(() => [] as string[])) {
    const pid = Number(name.split("-")[0]);
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || isAlive(pid)) continue;
    await rmdir(path.join(parent, name)).catch(() => undefined); // fails while not empty, or not a group
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
