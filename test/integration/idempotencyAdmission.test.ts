import { DEFAULT_PLANS } from "../../lambdas/config/plans";
import { LOCAL_ACCOUNT } from "../../lambdas/local/bootstrap";
import { newRunId } from "../../lambdas/runs/runIds";
import { requestHash } from "../../lambdas/store/idempotencyStore";
import { wakeQueue } from "../../lambdas/queue/dispatchQueue";
import { startTestService, type TestService } from "../helpers/localService";

// Idempotency-Key duplicates of a request whose run is not started yet (docs/api.md, Idempotency):
// a run past the plan's concurrency (or waiting for a worker) is queued, never refused, so a
// duplicate replays the queued run.

const SLOW = "export default async (ms: number = 50) => { await new Promise((r) => setTimeout(r, ms)); return { ms }; };";
const SYNC_MS = 3000;
const plans = { ...DEFAULT_PLANS, one: { concurrency: 1, invocations_per_month: 1000, max_timeout_seconds: 300, max_memory_mb: 2048 } };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("Idempotency-Key duplicates of a run not yet started", () => {
  let t: TestService;
  let key: string;
  let singleId: string;

  beforeAll(async () => {
    // One worker per function: a run admitted by its plan can still wait for a worker (and be refused).
    t = await startTestService({ config: { plans, syncWaitSeconds: SYNC_MS / 1000, workers: { perFunction: 1, total: 4, idleSeconds: 60 } } });
    key = await t.newAccount("solo", "one");
    await t.deploy("slow", SLOW, {}, key);
    singleId = String((await t.deploy("single", SLOW)).function_id);
  }, 60_000);

  afterAll(async () => {
    await t?.destroy();
  });

  /** Takes the account's one plan slot (a run in flight elsewhere) until the returned function gives it back. */
  async function holdSlot(): Promise<() => Promise<void>> {
    const limits = t.service.deps.store.limits;
    const admission = await limits.admit("solo", "held", { concurrency: 1, invocationsPerMonth: 1000 }, Date.now() + 60_000, new Date());
    expect(admission).toMatchObject({ admitted: true });
    let freed = false;
    return async () => {
      if (freed) return;
      freed = true;
      // As a run's end does: the release wakes the account's queue.
      const { queued } = await limits.release("solo", "held", true);
      if (queued > 0) wakeQueue(t.service.deps, "solo");
    };
  }

  const invoke = (idem: string, options: { async?: boolean; token?: string; fn?: string; ms?: number } = {}) => {
    const headers: Record<string, string> = { "idempotency-key": idem, ...(options.async ? { prefer: "respond-async" } : {}) };
    const sent = Date.now();
    return t.call("POST", `/functions/${options.fn ?? "slow"}`, { token: options.token ?? key, body: { ms: options.ms ?? 50 }, headers }).then((answer) => ({ ...answer, ms: Date.now() - sent }));
  };

  async function finished(runId: string, token: string) {
    for (;;) {
      const run = (await t.call("GET", `/runs/${runId}`, { token })).body;
      if (run.finished_at) return run;
      await sleep(100);
    }
  }

  it("replays a respond-async duplicate of a queued run: the first is answered 202 queued at once, the duplicate gets the same run", async () => {
    const free = await holdSlot();
    try {
      const first = await invoke("q2", { async: true });
      expect([first.status, first.body.status]).toEqual([202, "queued"]);
      expect(first.ms).toBeLessThan(2000);
      const duplicate = await invoke("q2", { async: true });
      expect([duplicate.status, duplicate.body.run_id, duplicate.headers.get("idempotent-replayed")]).toEqual([202, first.body.run_id, "true"]);
      await free();
      expect(await finished(String(first.body.run_id), key)).toMatchObject({ status: "succeeded" });
      expect((await t.call("GET", "/functions/slow/logs", { token: key })).body.items).toHaveLength(1);
    } finally {
      await free();
    }
  }, 30_000);

  it("answers a synchronous call whose run stays queued past its window 202 queued, and a duplicate replays that run", async () => {
    const free = await holdSlot();
    try {
      const answers = await Promise.all([invoke("q4"), sleep(300).then(() => invoke("q4"))]);
      const runIds = new Set(answers.map((answer) => answer.body.run_id));
      expect(runIds.size).toBe(1);
      for (const answer of answers) expect([answer.status, answer.body.status]).toEqual([202, "queued"]);
      await free();
      expect(await finished(String(answers[0]!.body.run_id), key)).toMatchObject({ status: "succeeded" });
    } finally {
      await free();
    }
  }, 30_000);

  it("answers a respond-async call whose run waits for a busy worker 202 queued (machine_busy) at once, and replays it to a duplicate", async () => {
    // The function's one worker is busy for longer than the window.
    const busy = await invoke("busy", { async: true, token: t.adminKey, fn: "single", ms: SYNC_MS + 2500 });
    expect(busy.status).toBe(202);
    const first = await invoke("q5", { async: true, token: t.adminKey, fn: "single" });
    expect([first.status, first.body.status]).toEqual([202, "queued"]);
    expect(first.ms).toBeLessThan(2000);
    expect((await t.call("GET", `/runs/${first.body.run_id}`)).body).toMatchObject({ status: "queued", queue_reason: "machine_busy" });
    const duplicate = await invoke("q5", { async: true, token: t.adminKey, fn: "single" });
    expect([duplicate.status, duplicate.body.run_id, duplicate.headers.get("idempotent-replayed")]).toEqual([202, first.body.run_id, "true"]);
    expect(await finished(String(first.body.run_id), t.adminKey)).toMatchObject({ status: "succeeded" });
    expect(await finished(String(busy.body.run_id), t.adminKey)).toMatchObject({ status: "succeeded" });
  }, 30_000);

  it("gives back a key whose run has no record long after its window (the service died, or giving it back failed) and starts a run", async () => {
    // The function's one worker idle again (its process is replaced after each run: on a busy
    // machine the last test's can still be starting, past the 3 s window of the call below).
    await t.workersIdle();
    // What a request that claimed the key and never wrote its run leaves: a claim for a run that does not exist.
    const claimedAt = new Date(Date.now() - 60_000);
    const abandoned = { request_hash: requestHash(1, { ms: 50 }), run_id: newRunId() };
    expect(await t.service.deps.store.idempotency.claim(LOCAL_ACCOUNT, singleId, "q7", abandoned, claimedAt)).toEqual({ claimed: true });
    const answer = await invoke("q7", { token: t.adminKey, fn: "single" });
    expect([answer.status, answer.headers.get("idempotent-replayed")]).toEqual([200, null]);
    expect(answer.headers.get("x-run-id")).not.toBe(abandoned.run_id);
    const retry = await invoke("q7", { token: t.adminKey, fn: "single" });
    expect([retry.status, retry.headers.get("x-run-id"), retry.headers.get("idempotent-replayed")]).toEqual([200, answer.headers.get("x-run-id"), "true"]);
  }, 30_000);
});
