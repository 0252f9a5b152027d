import { readdirSync, readFileSync } from "node:fs";

/**
 * A uid (and gid) of its own for each worker sandbox when the service runs as root: a worker
 * cannot signal, trace or read the files of another worker, or the service's. Picked round
 * robin from a range no account on a usual machine has, skipping those in use, so a uid is
 * not handed to a new worker right after its last one ended.
 *
 * "In use" counts every process on the machine, not only this service's: two services (or two
 * in one process, as tests run them) must never give their workers the same uid, or a hostile
 * worker of one could signal the other's workers. One allocator per process (WORKER_UIDS), its
 * round robin starting at an offset of the process id, and every uid some process runs as
 * (read from /proc) skipped.
 */
const FIRST = 1_800_000_000;
const COUNT = 10_000;

export class WorkerUids {
  private next: number;
  private readonly inUse = new Set<number>();

  constructor(
    start = 0,
    /** The uids processes on this machine run as now. */
    private readonly running: () => Set<number> = runningUids,
  ) {
    this.next = ((start % COUNT) + COUNT) % COUNT;
  }

  acquire(): number {
    const running = this.running();
    for (let tried = 0; tried < COUNT; tried++) {
      const uid = FIRST + ((this.next + tried) % COUNT);
      if (this.inUse.has(uid) || running.has(uid)) continue;
      this.next = (this.next + tried + 1) % COUNT;
      this.inUse.add(uid);
      return uid;
    }
    throw new Error("every worker uid is in use");
  }

  release(uid: number): void {
    this.inUse.delete(uid);
  }
}

/** The real uids of the processes that exist now (those of the workers' range only matter). */
function runningUids(): Set<number> {
  const uids = new Set<number>();
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
      if (uid >= FIRST && uid < FIRST + COUNT) uids.add(uid);
    } catch {
      // ended meanwhile
    }
  }
  return uids;
}

/** This process's allocator, shared by every service and sandbox check in it. */
export const WORKER_UIDS = new WorkerUids(process.pid * 7919);
