import { readdirSync, readFileSync } from "node:fs";
import { parseStat, treeOf, type ProcessEntry } from "./processMemory";

/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in ticks of 10 ms. */
const TICK_MS = 10;

/** What a process of the service's tree is, for the CPU split: by its command line. */
export type CpuPart = "service" | "dynalite" | "worker" | "host" | "browser" | "other";

function partOf(entry: ProcessEntry, root: number, cmdline: string): CpuPart {
  if (entry.pid === root) return "service";
  if (cmdline.includes("dynalite")) return "dynalite";
  if (cmdline.includes("--user-data-dir=") || /chrom|headless/i.test(entry.command)) return "browser";
  if (/\/worker\.cjs(\s|$)/.test(cmdline) && !cmdline.includes("--ro-bind")) return "worker";
  if (/\/host\.cjs(\s|$)/.test(cmdline)) return "host";
  return "other";
}

/**
 * CPU time (ms) used so far by `root` and its descendants, split by part: each process's own
 * time plus that of its children it has reaped (a browser's ended renderers count in the
 * browser's), read from /proc/<pid>/stat.
 */
export function readTreeCpu(root: number): Record<CpuPart, number> {
  const table: (ProcessEntry & { ms: number; cmdline: string })[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const entry = parseStat(stat);
      if (!entry) continue;
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i] ?? 0), 0);
      table.push({ ...entry, ms: ticks * TICK_MS, cmdline: readFileSync(`/proc/${name}/cmdline`, "utf8").replace(/\0/g, " ") });
    } catch {
      // ended while read
    }
  }
  const parts: Record<CpuPart, number> = { service: 0, dynalite: 0, worker: 0, host: 0, browser: 0, other: 0 };
  for (const entry of treeOf(table, root)) parts[partOf(entry, root, entry.cmdline)] += entry.ms;
  return parts;
}

/** One process's CPU time so far (ms), its reaped children's included; 0 once it is gone. */
export function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i] ?? 0), 0) * TICK_MS;
  } catch {
    return 0;
  }
}

/** This process's own CPU time (ms). */
export function ownCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** CPU `ms` spread over `calls`, to 0.1 ms. */
export function msPerCall(ms: number, calls: number): number {
  return Math.round((ms / Math.max(1, calls)) * 10) / 10;
}

/** CPU ms per call of each part between two readings, to 0.1 ms. */
export function perCall(before: Record<string, number>, after: Record<string, number>, calls: number): Record<string, number> {
  const split: Record<string, number> = {};
  for (const part of Object.keys(after)) split[part] = msPerCall((after[part] ?? 0) - (before[part] ?? 0), calls);
  return split;
}
