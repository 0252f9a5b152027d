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
});
