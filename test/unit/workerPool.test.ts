import { WorkerPool } from "../../lambdas/runtime/local/workerPool";
import type { WorkerProcess } from "../../lambdas/runtime/local/workerProcess";

/** A worker process stand-in that records its kill; real workers are covered by the integration tests. */
function fakeWorker() {
  const worker = { alive: true, killed: [] as string[], async kill(reason: string) { worker.killed.push(reason); worker.alive = false; } };
  return worker;
}

describe("the worker pool", () => {
  it("stops a worker that was still starting when the pool closed, and close waits for it", async () => {
    const worker = fakeWorker();
    let finishStart: () => void = () => undefined;
    const pool = new WorkerPool({ perFunction: 1, total: 1, idleMs: 60_000 }, () =>
      new Promise((resolve) => (finishStart = () => resolve(worker as unknown as WorkerProcess))),
    );
    const lease = await pool.acquire("fn_a", 1, 1000);
    const started = lease.worker();
    let closed = false;
    const closing = pool.close().then(() => (closed = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(closed).toBe(false); // it waits for the start
    finishStart();
    await closing;
    expect(worker.killed).toEqual(["service stopping"]);
    await expect(started).rejects.toMatchObject({ code: "service_unavailable" });
    await lease.release(true);
    expect(pool.size).toEqual({ processes: 0, idle: 0 });
  });

  it("keeps a worker that finished starting before the close busy, and kills it at the close", async () => {
    const worker = fakeWorker();
    const pool = new WorkerPool({ perFunction: 1, total: 1, idleMs: 60_000 }, async () => worker as unknown as WorkerProcess);
    const lease = await pool.acquire("fn_a", 1, 1000);
    await expect(lease.worker()).resolves.toBe(worker);
    await pool.close();
    expect(worker.killed).toEqual(["service stopping"]);
  });

  it("does not stop another account's worker used lately to give a busy account more than its share: that account waits for one of its own", async () => {
    const workers: ReturnType<typeof fakeWorker>[] = [];
    const pool = new WorkerPool({ perFunction: 4, total: 4, idleMs: 60_000 }, async () => {
      const worker = Object.assign(fakeWorker(), { lastUsed: Date.now() });
      workers.push(worker);
      return worker as unknown as WorkerProcess;
    });
    // The other account's worker, idle between its calls.
    const other = await pool.acquire("fn_other", 1, 1000, "other");
    const otherWorker = await other.worker();
    await other.release(true);
    // The busy account takes the three other workers, then asks for a fourth.
    const busy = await Promise.all([1, 2, 3].map(() => pool.acquire("fn_busy", 1, 1000, "busy")));
    await Promise.all(busy.map((lease) => lease.worker()));
    const fourth = pool.acquire("fn_busy", 1, Number.POSITIVE_INFINITY, "busy");
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(pool.waiting).toBe(1);
    expect(otherWorker).toMatchObject({ alive: true, killed: [] });
    // The other account's next call finds its worker warm.
    const again = await pool.acquire("fn_other", 1, 1000, "other");
    expect(again.warm).toBe(true);
    await expect(again.worker()).resolves.toBe(otherWorker);
    await again.release(true);
    // A worker of the busy account's freed: its waiting call takes the room.
    await busy[0]?.release(false);
    const granted = await fourth;
    expect(granted.warm).toBe(false);
    // Under its share (one of two accounts: one of two workers), an account does stop another's idle worker.
    const single = new WorkerPool({ perFunction: 4, total: 2, idleMs: 60_000 }, async () => Object.assign(fakeWorker(), { lastUsed: Date.now() }) as unknown as WorkerProcess);
    const kept = await Promise.all(["fn_x", "fn_y"].map((fn) => single.acquire(fn, 1, 1000, "other")));
    const keptWorkers = (await Promise.all(kept.map((lease) => lease.worker()))) as unknown as ReturnType<typeof fakeWorker>[];
    for (const lease of kept) await lease.release(true);
    await expect(single.acquire("fn_busy", 1, 1000, "busy")).resolves.toMatchObject({ warm: false });
    expect(keptWorkers.map((worker) => worker.killed)).toEqual([["evicted to make room"], []]);
    await pool.close();
    await single.close();
  });
});
