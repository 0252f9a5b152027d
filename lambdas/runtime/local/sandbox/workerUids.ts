/**
 * A uid (and gid) of its own for each worker sandbox when the service runs as root: a worker
 * cannot signal, trace or read the files of another worker, or the service's. Picked round
 * robin from a range no account on a usual machine has, skipping those in use, so a uid is
 * not handed to a new worker right after its last one ended.
 */
const FIRST = 1_800_000_000;
const COUNT = 10_000;

export class WorkerUids {
  private next = 0;
  private readonly inUse = new Set<number>();

  acquire(): number {
    for (let tried = 0; tried < COUNT; tried++) {
      const uid = FIRST + ((this.next + tried) % COUNT);
      if (this.inUse.has(uid)) continue;
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
