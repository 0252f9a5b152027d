import { DEFAULT_PLANS } from "../../lambdas/config/plans";
import { LOCAL_ACCOUNT } from "../../lambdas/local/bootstrap";
import { newRunId } from "../../lambdas/runs/runIds";
import { requestHash } from "../../lambdas/store/idempotencyStore";
import { expectError } from "../helpers/http";
import { startTestService, type TestService } from "../helpers/localService";

// Idempotency-Key duplicates of a request whose run is not started yet (docs/api.md, Idempotency):
// a duplicate never replays a run that may still be refused; it waits, and when the first
// request is refused (its key given back) it tries itself, within its own sync window.

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
    return async () => {
      await limits.release("solo", "held", true);
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

  it("answers a respond-async duplicate arriving while the first waits for a plan slot 503 within about a second, never a 202 for a run that is then removed", async () => {
    const free = await holdSlot();
    try {
      const first = invoke("q2", { async: true });
      await sleep(500);
      const duplicate = await invoke("q2", { async: true });
      expectError(duplicate, 503, "service_unavailable");
      expect(duplicate.headers.get("retry-after")).toBe("1");
      expect(duplicate.ms).toBeLessThan(2000);
      expectError(await first, 429, "concurrency_limit_exceeded");
      expect((await t.call("GET", "/functions/slow/logs", { token: key })).body.items).toHaveLength(0);
    } finally {
      await free();
    }
  }, 30_000);

  it("starts the duplicate's own run when the slot frees up within its window after the first was refused", async () => {
    const free = await holdSlot();
    let freed = false;
    try {
      const first = invoke("q3", { async: true });
      await sleep(1500);
      const duplicate = invoke("q3");
      expectError(await first, 429, "concurrency_limit_exceeded");
      await free();
      freed = true;
      const answer = await duplicate;
      expect([answer.status, answer.headers.get("idempotent-replayed")]).toEqual([200, null]);
      const runId = String(answer.headers.get("x-run-id"));
      expect(await finished(runId, key)).toMatchObject({ status: "succeeded" });
      // The key is now the duplicate's run's: a retry replays it.
      const retry = await invoke("q3");
      expect([retry.status, retry.headers.get("x-run-id"), retry.headers.get("idempotent-replayed")]).toEqual([200, runId, "true"]);
    } finally {
      if (!freed) await free();
    }
  }, 30_000);

  it("keeps a synchronous duplicate within its own window: 429 when capacity never freed, not a second full window", async () => {
    const free = await holdSlot();
    try {
      const first = invoke("q4");
      await sleep(500);
      const duplicate = await invoke("q4");
      expectError(await first, 429, "concurrency_limit_exceeded");
      expectError(duplicate, 429, "concurrency_limit_exceeded");
      expect(duplicate.ms).toBeLessThan(SYNC_MS + 1500);
    } finally {
      await free();
    }
  }, 30_000);

  it("answers simultaneous duplicates of a refused request 429, each, not 503 for a start it has not seen settle", async () => {
    const free = await holdSlot();
    try {
      const answers = await Promise.all([invoke("q6"), invoke("q6")]);
      for (const answer of answers) expectError(answer, 429, "concurrency_limit_exceeded");
    } finally {
      await free();
    }
  }, 30_000);

  it("answers a respond-async duplicate of a run still waiting for a worker (which may yet be refused) 503 within about a second, not a replay", async () => {
    // The function's one worker is busy for longer than the window.
    const busy = await invoke("busy", { async: true, token: t.adminKey, fn: "single", ms: SYNC_MS + 2500 });
    expect(busy.status).toBe(202);
    const first = invoke("q5", { async: true, token: t.adminKey, fn: "single" });
    await sleep(500);
    const duplicate = await invoke("q5", { async: true, token: t.adminKey, fn: "single" });
    expectError(duplicate, 503, "service_unavailable");
    expect(duplicate.headers.get("retry-after")).toBe("1");
    expect(duplicate.ms).toBeLessThan(2000);
    expectError(await first, 429, "concurrency_limit_exceeded");
    expect(await finished(String(busy.body.run_id), t.adminKey)).toMatchObject({ status: "succeeded" });
  }, 30_000);

  it("gives back a key whose run has no record long after its window (the service died, or giving it back failed) and starts a run", async () => {
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
