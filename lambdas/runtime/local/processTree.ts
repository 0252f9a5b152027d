import { readdir, readFile } from "node:fs/promises";

/**
 * Memory (MB) of a set of processes and every process in the given process groups, read
 * from /proc (Linux): proportional set size (shared pages split among their users, so a
 * browser's many processes are not counted many times over). Ended processes are skipped.
 */
export async function residentMb(pids: number[], groups: number[]): Promise<number> {
  const wanted = new Set(pids);
  if (groups.length > 0) {
    for (const entry of await readdir("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
      // Fields after the command name (which may hold spaces): state ppid pgrp …
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (groups.includes(Number(fields[2]))) wanted.add(Number(entry));
    }
  }
  let kb = 0;
  for (const pid of wanted) {
    const rollup = await readFile(`/proc/${pid}/smaps_rollup`, "utf8").catch(() => "");
    kb += Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0);
  }
  return kb / 1024;
}
