import { readdirSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";

/**
 * Each running process's parent, from /proc/<pid>/stat. Read synchronously:
 * a scan of the machine's ~100 processes takes about 1 ms of CPU this way, and about 18 ms
 * through fs.promises (three thread-pool round trips per file), which at a sample every 200 ms
 * per busy worker was most of the service's CPU in a browser run (docs/benchmarks.md).
 */
function processTable(): { pid: number; ppid: number }[] {
  const table: { pid: number; ppid: number }[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // ended meanwhile
    }
    // Fields after the command name (which may hold spaces): state ppid …
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    table.push({ pid: Number(entry), ppid: Number(fields[1]) });
  }
  return table;
}

/**
 * Proportional set size (MB) of these processes: shared pages are split among their users, so
 * a browser's many processes are not counted many times over. Ended processes are skipped.
 */
async function pssMb(pids: Iterable<number>): Promise<number> {
  let kb = 0;
  for (const pid of pids) {
    const rollup = await readFile(`/proc/${pid}/smaps_rollup`, "utf8").catch(() => "");
    kb += Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0);
  }
  return kb / 1024;
}

/** Memory (MB) of a process and all of its descendants (a runner and its browser), as proportional set size. */
export async function processTreeMb(root: number): Promise<number> {
  const children = new Map<number, number[]>();
  for (const { pid, ppid } of processTable()) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  const tree = new Set([root]);
  for (const pid of tree) for (const child of children.get(pid) ?? []) tree.add(child);
  return pssMb(tree);
}

/** A running watch of memory: the highest sample so far, and samples on demand. */
export interface MemoryWatch {
  /** The highest sample so far (MB; 0 before the first). */
  readonly peak: number;
  /** Takes a sample now (after one in flight, if any) and resolves with it. */
  sample(): Promise<number>;
  /** Stops the periodic samples (one in flight still counts). */
  stop(): void;
}

/**
 * Samples `measure` (MB) every `intervalMs`, keeping the peak and handing each sample to
 * `onSample`; a measure that fails counts as 0. A tick that comes while a sample is still
 * being taken is skipped: a slow /proc never piles samples up.
 */
export function watchMemory(measure: () => Promise<number>, intervalMs: number, onSample: (mb: number) => void = () => undefined): MemoryWatch {
  let peak = 0;
  let inFlight: Promise<number> | undefined;
  const take = async (): Promise<number> => {
    const mb = await measure().catch(() => 0);
    peak = Math.max(peak, mb);
    onSample(mb);
    return mb;
  };
  const timer = setInterval(() => {
    if (inFlight) return;
    inFlight = take().finally(() => (inFlight = undefined));
  }, intervalMs);
  timer.unref(); // a watch never keeps a process alive on its own
  return {
    get peak() {
      return peak;
    },
    async sample() {
      await inFlight;
      return take();
    },
    stop: () => clearInterval(timer),
  };
}
