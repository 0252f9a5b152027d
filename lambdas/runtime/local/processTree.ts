import { readdirSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";

/**
 * Each running process's parent and start time, from /proc/<pid>/stat. Read synchronously: a
 * scan of the machine's ~100 processes takes about 1 ms of CPU this way, and about 18 ms
 * through fs.promises (three thread-pool round trips per file), which at a sample every 200 ms
 * per busy worker was most of the service's CPU in a browser run (docs/benchmarks.md).
 */
function processTable(): { pid: number; ppid: number; started: string }[] {
  const table: { pid: number; ppid: number; started: string }[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // ended meanwhile
    }
    // Fields after the command name (which may hold spaces): state ppid … (starttime is the 20th).
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    table.push({ pid: Number(entry), ppid: Number(fields[1]), started: fields[19] ?? "" });
  }
  return table;
}

/** `root` and its descendants, each keyed by pid and start time (a pid used again is another process). */
function treeOf(root: number): Map<string, number> {
  const table = processTable();
  const children = new Map<number, typeof table>();
  for (const entry of table) children.set(entry.ppid, [...(children.get(entry.ppid) ?? []), entry]);
  const tree = table.filter((entry) => entry.pid === root);
  for (const entry of tree) for (const child of children.get(entry.pid) ?? []) if (child.pid !== root) tree.push(child);
  return new Map(tree.map((entry) => [`${entry.pid}:${entry.started}`, entry.pid]));
}

/** A process's PSS and RSS (kB) from /proc/<pid>/smaps_rollup (a walk of its page tables); null once it ended. */
async function rollupKb(pid: number): Promise<{ pss: number; rss: number } | null> {
  const rollup = await readFile(`/proc/${pid}/smaps_rollup`, "utf8").catch(() => "");
  if (rollup === "") return null;
  return { pss: Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0), rss: Number(/^Rss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0) };
}

/** A process's RSS (kB) from /proc/<pid>/status (a counter: no page walk); null once it ended. */
function rssKb(pid: number): number | null {
  try {
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  } catch {
    return null;
  }
}

/** How often each process of a metered tree has its PSS read exactly (see TreeMeter). */
export const EXACT_EVERY_MS = 1000;

/**
 * The memory of a process tree as proportional set size (MB): shared pages are split among
 * their users, so a browser's many processes are not counted many times over.
 *
 * Reading a process's PSS walks its page tables (about 1 ms of kernel time for a browser
 * process), so each process is read exactly at most every `exactEveryMs`; in between, its
 * sample is its last exact PSS plus how much its RSS (a counter) changed since. Pages a
 * process gains count in full at once, as private pages do in PSS: a process that allocates
 * shows at the next sample. An estimate can be off by pages whose sharing changed (a process
 * that shared them ended) until the next exact read. `sample(true)` reads all exactly.
 */
export class TreeMeter {
  private readonly exact = new Map<string, { pss: number; rss: number; at: number }>();

  constructor(
    private readonly root: number,
    private readonly exactEveryMs = EXACT_EVERY_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  async sample(exactly = false): Promise<number> {
    const tree = treeOf(this.root);
    for (const key of this.exact.keys()) if (!tree.has(key)) this.exact.delete(key);
    let kb = 0;
    for (const [key, pid] of tree) {
      const last = this.exact.get(key);
      if (!exactly && last && this.now() - last.at < this.exactEveryMs) {
        const rss = rssKb(pid);
        if (rss !== null) kb += Math.max(0, last.pss + rss - last.rss);
        continue;
      }
      const read = await rollupKb(pid);
      if (read === null) continue; // ended
      this.exact.set(key, { ...read, at: this.now() });
      kb += read.pss;
    }
    return kb / 1024;
  }
}

/** Memory (MB) of a process and all of its descendants (a runner and its browser), as proportional set size, read exactly. */
export function processTreeMb(root: number): Promise<number> {
  return new TreeMeter(root).sample(true);
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
