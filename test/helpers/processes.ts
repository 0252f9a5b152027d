import { readdirSync, readFileSync } from "node:fs";
import { processRunning } from "../../lambdas/runtime/local/sandbox/sandboxedHost";

/** Pids of live processes whose command line contains `marker`. */
export function processesWith(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      const state = readFileSync(`/proc/${entry}/stat`, "utf8").split(") ")[1]?.[0];
      if (cmdline.includes(marker) && state !== "Z") pids.push(Number(entry));
    } catch {
      // ended meanwhile
    }
  }
  return pids;
}

/**
 * Pids of the processes with `marker` once the set has stopped changing (the same in three reads
 * 200 ms apart, within `timeoutMs`): after a run's answer its sandbox still replaces the worker
 * and resets a kept browser (the run's renderers go with its contexts).
 */
export async function settledProcessesWith(marker: string, timeoutMs = 15_000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  let last = processesWith(marker).join(",");
  let same = 0;
  while (same < 2 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const now = processesWith(marker).join(",");
    same = now === last ? same + 1 : 0;
    last = now;
  }
  return processesWith(marker);
}

/** Whether a process is alive (a zombie, ended but not yet reaped, is not). */
export const isAlive = processRunning;

/** Waits until no process carries `marker` (processes are reaped asynchronously). */
export async function expectNoProcessesWith(marker: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (processesWith(marker).length > 0) {
    if (Date.now() > deadline) throw new Error(`processes left with ${marker}: ${processesWith(marker).join(", ")}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** RSS of one process in MB (0 when it is gone). */
export function rssMb(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb ? Math.round(Number(kb) / 1024) : 0;
  } catch {
    return 0;
  }
}

/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100;

/**
 * CPU time (user + system, ms) used so far by `root` and each live process below it, by pid,
 * read from /proc (10 ms ticks): for the service, its store's child process too.
 */
export function treeCpuMs(root: number): Map<number, number> {
  const stats = new Map<number, { parent: number; ms: number }>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Fields after the command's closing parenthesis: state, ppid, …, utime (the 14th field of the line) and stime (15th).
      const fields = (readFileSync(`/proc/${entry}/stat`, "utf8").split(") ")[1] ?? "").split(" ");
      stats.set(Number(entry), { parent: Number(fields[1]), ms: ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND });
    } catch {
      // ended meanwhile
    }
  }
  const inTree = (pid: number): boolean => {
    for (let at = pid, hops = 0; at > 1 && hops < 64; at = stats.get(at)?.parent ?? 0, hops++) if (at === root) return true;
    return false;
  };
  const tree = new Map<number, number>();
  for (const [pid, stat] of stats) if (inTree(pid)) tree.set(pid, stat.ms);
  return tree;
}

/** CPU ms the tree used between two readings of treeCpuMs (a process that ended meanwhile counts for nothing). */
export function cpuMsBetween(before: Map<number, number>, after: Map<number, number>): number {
  let ms = 0;
  for (const [pid, now] of after) ms += now - (before.get(pid) ?? 0);
  return ms;
}
