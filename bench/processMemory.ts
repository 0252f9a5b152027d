import { readdir, readFile } from "node:fs/promises";

/** One process as /proc/<pid>/stat names it. */
export interface ProcessEntry {
  pid: number;
  ppid: number;
  /** The command name (`comm`, at most 15 characters): `node`, `chromium`, `bwrap`… */
  command: string;
}

/** The memory of a process tree: proportional set size in all and per command name. */
export interface TreeMemory {
  pss_mb: number;
  processes: number;
  by_command: Record<string, { pss_mb: number; processes: number }>;
}

/** Parses /proc/<pid>/stat; null for text that is not one (a process that ended while read). */
export function parseStat(text: string): ProcessEntry | null {
  // "pid (comm) state ppid …": the command name may hold spaces and parentheses; it ends at the last ")".
  const open = text.indexOf(" (");
  const close = text.lastIndexOf(")");
  if (open < 0 || close < open) return null;
  const pid = Number(text.slice(0, open));
  const ppid = Number(text.slice(close + 2).split(" ")[1]);
  if (!Number.isInteger(pid) || !Number.isInteger(ppid)) return null;
  return { pid, ppid, command: text.slice(open + 2, close) };
}

/** The `Pss:` line of /proc/<pid>/smaps_rollup, in kB (0 when absent: a process that ended). */
export function parsePssKb(smapsRollup: string): number {
  return Number(/^Pss:\s+(\d+) kB/m.exec(smapsRollup)?.[1] ?? 0);
}

/** `root` and every process descended from it, in breadth-first order (root first, when it exists). */
export function treeOf<T extends ProcessEntry>(table: T[], root: number): T[] {
  const children = new Map<number, T[]>();
  for (const entry of table) children.set(entry.ppid, [...(children.get(entry.ppid) ?? []), entry]);
  const tree = table.filter((entry) => entry.pid === root);
  for (const entry of tree) for (const child of children.get(entry.pid) ?? []) if (child.pid !== root) tree.push(child);
  return tree;
}

/** Sums each process's PSS (kB), in all and per command name, in MB rounded to 0.1. */
export function sumPss(processes: { command: string; pssKb: number }[]): TreeMemory {
  const mb = (kb: number) => Math.round(kb / 102.4) / 10;
  const kbByCommand = new Map<string, { kb: number; processes: number }>();
  let kb = 0;
  for (const { command, pssKb } of processes) {
    kb += pssKb;
    const into = kbByCommand.get(command) ?? { kb: 0, processes: 0 };
    kbByCommand.set(command, { kb: into.kb + pssKb, processes: into.processes + 1 });
  }
  const byCommand = [...kbByCommand].sort(([, a], [, b]) => b.kb - a.kb);
  return {
    pss_mb: mb(kb),
    processes: processes.length,
    by_command: Object.fromEntries(byCommand.map(([command, sum]) => [command, { pss_mb: mb(sum.kb), processes: sum.processes }])),
  };
}

/**
 * The memory of process `root` and all its descendants, read from /proc (Linux): the service,
 * its dynalite child, its workers' sandboxes and their browsers. PSS splits shared pages among
 * the processes that map them, so a browser's many processes are not counted many times over.
 * Reading another user's smaps_rollup needs root (the sandbox's workers run under uids of their own).
 */
export async function readTreeMemory(root: number): Promise<TreeMemory> {
  const table: ProcessEntry[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const entry = parseStat(await readFile(`/proc/${name}/stat`, "utf8").catch(() => ""));
    if (entry) table.push(entry);
  }
  const processes = [];
  for (const { pid, command } of treeOf(table, root)) {
    // Empty for a zombie (a browser's ended child, reaped when its frozen worker resumes); absent once it has ended.
    const rollup = await readFile(`/proc/${pid}/smaps_rollup`, "utf8").catch(() => "");
    if (rollup !== "") processes.push({ command, pssKb: parsePssKb(rollup) });
  }
  return sumPss(processes);
}
