import { readdirSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";

/** One process as /proc/<pid>/stat describes it: enough to find a tree and bound its growth. */
interface ProcessStat {
  pid: number;
  ppid: number;
  /** Its start time (clock ticks after boot): with the pid, it names one process (pids are used again). */
  started: string;
  /** Minor page faults so far: each maps one page, a new one (an allocation, a copy-on-write break) or a cached one. */
  minflt: number;
  /** Resident pages. */
  rssPages: number;
}

/** How old a shared reading of the process table may be (every busy worker's meter reads it). */
const TABLE_MAX_AGE_MS = 50;
let table: { at: number; processes: ProcessStat[] } | undefined;

/**
 * Every running process, from /proc/<pid>/stat, read synchronously: a scan of ~100 processes
 * takes about 1 ms of CPU this way and about 18 ms through fs.promises (three thread-pool
 * round trips per file), which at a sample every 200 ms per busy worker was most of the
 * service's CPU in a browser run (docs/benchmarks.md). One reading serves every meter for
 * TABLE_MAX_AGE_MS, so many busy workers on a machine of many processes scan it once.
 */
function processTable(): ProcessStat[] {
  const now = performance.now();
  if (table && now - table.at < TABLE_MAX_AGE_MS) return table.processes;
  const processes: ProcessStat[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const parsed = parseStat(entry);
    if (parsed) processes.push(parsed);
  }
  table = { at: now, processes };
  return processes;
}

function parseStat(pid: string): ProcessStat | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null; // ended meanwhile
  }
  // Fields after the command name (which may hold spaces): state ppid pgrp session tty tpgid
  // flags minflt … starttime (the 20th) vsize rss (the 22nd).
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { pid: Number(pid), ppid: Number(fields[1]), started: fields[19] ?? "", minflt: Number(fields[7] ?? 0), rssPages: Number(fields[21] ?? 0) };
}

/**
 * `root` and its descendants, each keyed by pid and start time: `members` (a cgroup's
 * processes) when given and readable, else found from `root` down through
 * /proc/<pid>/task/<tid>/children (a few files per process of the tree), else from the whole
 * process table (a kernel without those files).
 */
function treeOf(root: number, members?: () => number[] | undefined): Map<string, ProcessStat> {
  const listed = members?.() ?? descendants(root);
  if (listed) {
    const tree = new Map<string, ProcessStat>();
    for (const pid of listed) {
      const entry = parseStat(String(pid));
      if (entry) tree.set(`${entry.pid}:${entry.started}`, entry);
    }
    return tree;
  }
  return treeFromTable(root);
}

/** Whether this kernel has /proc/<pid>/task/<tid>/children (CONFIG_PROC_CHILDREN). */
let childrenFiles: boolean | undefined;

/** `root` and its descendants' pids from the kernel's children lists; undefined without them. */
function descendants(root: number): number[] | undefined {
  if (childrenFiles === false) return undefined;
  const found: number[] = [];
  const queue = [root];
  const seen = new Set<number>();
  for (let pid = queue.pop(); pid !== undefined; pid = queue.pop()) {
    if (seen.has(pid)) continue;
    seen.add(pid);
    found.push(pid);
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue; // ended meanwhile
    }
    for (const task of tasks) {
      let children: string;
      try {
        children = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8");
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT" || childrenFiles === true) continue; // a thread that ended
        // The first read on a kernel without the file: it has none anywhere.
        childrenFiles = false;
        return undefined;
      }
      childrenFiles = true;
      for (const child of children.split(" ")) if (child.trim() !== "") queue.push(Number(child));
    }
  }
  return found;
}

/** `root` and its descendants, from the whole process table. */
function treeFromTable(root: number): Map<string, ProcessStat> {
  const processes = processTable();
  const children = new Map<number, ProcessStat[]>();
  for (const entry of processes) {
    const siblings = children.get(entry.ppid);
    if (siblings) siblings.push(entry);
    else children.set(entry.ppid, [entry]);
  }
  const tree = processes.filter((entry) => entry.pid === root);
  for (const entry of tree) for (const child of children.get(entry.pid) ?? []) if (child.pid !== root) tree.push(child);
  return new Map(tree.map((entry) => [`${entry.pid}:${entry.started}`, entry]));
}

/** A process's pid in its own (innermost) PID namespace; 0 once it ended. */
function innerPid(pid: number): number {
  try {
    const line = /^NSpid:\s*([\d\s]+)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? "";
    return Number(line.trim().split(/\s+/).pop() ?? 0) || pid;
  } catch {
    return 0;
  }
}

let pageKbFound: number | undefined;
/** The kernel's page size in kB: this process's resident size in kB over its resident pages (4 on most machines). */
function pageKb(): number {
  if (pageKbFound !== undefined) return pageKbFound;
  const pages = parseStat("self")?.rssPages ?? 0;
  const kb = Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? 0);
  const ratio = pages > 0 ? kb / pages : 4;
  pageKbFound = [4, 16, 64].find((size) => ratio < size * 1.5) ?? 4;
  return pageKbFound;
}

/** A process's PSS (kB) from /proc/<pid>/smaps_rollup (a walk of its page tables); null once it ended. */
async function pssKb(pid: number): Promise<number | null> {
  const rollup = await readFile(`/proc/${pid}/smaps_rollup`, "utf8").catch(() => "");
  if (rollup === "") return null;
  return Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0);
}

/** How often a metered tree has its PSS read exactly (see TreeMeter). */
export const EXACT_EVERY_MS = 1000;

/** A process as last read exactly: its PSS then (kB), its counters then, and its estimate since. */
interface Reading {
  pss: number;
  rssPages: number;
  minflt: number;
  estimate: number;
}

/**
 * The memory of a process tree as proportional set size (MB): shared pages are split among
 * their users, so a browser's many processes are not counted many times over.
 *
 * Reading a process's PSS walks its page tables (about 1 ms of kernel time for a browser
 * process), so the whole tree is read exactly at most every `exactEveryMs` (and a process new
 * to the tree at first sight). In between, a sample is an upper bound, never an undercount of
 * what the tree's own processes did:
 * - a process's PSS grows only by the pages it maps: each is one minor fault (a new page, a
 *   copy-on-write break, a cached file page) or shows in its resident size, so its bound is its
 *   last exact PSS plus both growths (a plain allocation counts twice: an estimate errs high);
 * - a process that left keeps its last estimate in the total until the next exact read (its
 *   pages were freed, or shared ones moved to the others: the tree's total cannot grow by it).
 * What it cannot see is pages the tree shares with processes outside it whose other users
 * ended (another sandbox's browser, say): the next exact read, within `exactEveryMs`, counts
 * them. `sample(true)` reads the whole tree exactly.
 */
export class TreeMeter {
  private readings = new Map<string, Reading>();
  private departedKb = 0;
  private exactAt = Number.NEGATIVE_INFINITY;
  /** The pid, in its own PID namespace, of a process left out (see exclude); 0: none. */
  private excluded = 0;
  /** Each process's pid in its own PID namespace (the last of NSpid in /proc/<pid>/status), by key. */
  private readonly innerPids = new Map<string, number>();

  constructor(
    private readonly root: number,
    private readonly exactEveryMs = EXACT_EVERY_MS,
    private readonly now: () => number = () => performance.now(),
    /** The tree's processes, when something lists them (a cgroup's); else found from `root`. */
    private readonly members?: () => number[] | undefined,
  ) {}

  /**
   * Leaves the process whose pid in its own PID namespace is `innerPid` out of the samples
   * from now on (0: none): a sandbox's standby worker, named by its host. Only that one
   * process, never its children (it has none: a worker cannot start any).
   */
  exclude(innerPid: number): void {
    this.excluded = innerPid;
  }

  async sample(exactly = false): Promise<number> {
    const tree = this.withoutExcluded(treeOf(this.root, this.members));
    if (exactly || this.now() - this.exactAt >= this.exactEveryMs) return this.readAll(tree);
    for (const [key, reading] of this.readings) {
      if (tree.has(key)) continue;
      this.departedKb += reading.estimate;
      this.readings.delete(key);
    }
    let kb = this.departedKb;
    for (const [key, process] of tree) {
      let reading = this.readings.get(key);
      if (!reading) {
        const pss = await pssKb(process.pid);
        if (pss === null) continue; // ended
        reading = { pss, rssPages: process.rssPages, minflt: process.minflt, estimate: pss };
        this.readings.set(key, reading);
      }
      const grownPages = Math.max(0, process.rssPages - reading.rssPages) + Math.max(0, process.minflt - reading.minflt);
      reading.estimate = reading.pss + grownPages * pageKb();
      kb += reading.estimate;
    }
    return kb / 1024;
  }

  private withoutExcluded(tree: Map<string, ProcessStat>): Map<string, ProcessStat> {
    for (const key of this.innerPids.keys()) if (!tree.has(key)) this.innerPids.delete(key);
    if (this.excluded === 0) return tree;
    for (const [key, process] of tree) {
      let inner = this.innerPids.get(key);
      if (inner === undefined) {
        inner = innerPid(process.pid);
        this.innerPids.set(key, inner);
      }
      if (inner === this.excluded) tree.delete(key);
    }
    return tree;
  }

  private async readAll(tree: Map<string, ProcessStat>): Promise<number> {
    const readings = new Map<string, Reading>();
    let kb = 0;
    for (const [key, process] of tree) {
      const pss = await pssKb(process.pid);
      if (pss === null) continue; // ended
      readings.set(key, { pss, rssPages: process.rssPages, minflt: process.minflt, estimate: pss });
      kb += pss;
    }
    this.readings = readings;
    this.departedKb = 0;
    this.exactAt = this.now();
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
