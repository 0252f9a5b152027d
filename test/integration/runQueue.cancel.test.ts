/**
 * The run queue's contract with cancel (issue #22 item 2, built on its own branch): a queued
 * run whose record is no longer `queued` never starts, whether cancel took it out of the queue
 * (removeQueued) or a dispatcher found it first; either way the account's counts come back.
 */
import { DEFAULT_PLANS } from "../../lambdas/config/plans";
import { wakeQueue } from "../../lambdas/queue/dispatchQueue";
import { removeQueued } from "../../lambdas/queue/removeQueued";
import { startTestService, type TestService } from "../helpers/localService";

const plans = { ...DEFAULT_PLANS, one: { concurrency: 1, invocations_per_month: 10_000, max_timeout_seconds: 300, max_memory_mb: 2048, max_queued: 100 } };
const SLEEP = "export default async (ms: number = 10) => { await new Promise((r) => setTimeout(r, ms)); return { ms }; }";
const async = { prefer: "respond-async" };

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ config: { plans, syncWaitSeconds: 2 } });
});
afterAll(() => t.destroy());

async function finished(token: string, runId: string) {
  for (let i = 0; i < 400; i++) {
    const run = (await t.call("GET", `/runs/${runId}`, { token })).body;
    if (run.finished_at) return run;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`run ${runId} did not end`);
}

/** Ends a queued run's record as a cancel does (a conditional write on `queued`); `canceled` stands in as `failed` here. */
async function endWhileQueued(runId: string) {
  const { store, clock } = t.service.deps;
  const run = await store.runs.get(runId);
  expect(run?.status).toBe("queued");
  const now = clock.now().toISOString();
  expect(await store.runs.putIfActive({ ...run!, status: "failed", error: { code: "canceled", message: "canceled" }, finished_at: now })).toBe(true);
  return run!;
}

describe("a queued run that is ended before it starts", () => {
  it("is taken out by removeQueued: the queue and the month's count come back, and it never starts", async () => {
    const key = await t.newAccount("cancel-remove", "one");
    await t.deploy("sleep", SLEEP, {}, key);
    const holding = await t.call("POST", "/functions/sleep", { token: key, body: { ms: 1500 }, headers: async });
    const queued = await t.call("POST", "/functions/sleep", { token: key, body: { ms: 10 }, headers: async });
    expect([holding.status, queued.body.status]).toEqual([202, "queued"]);
    const run = await endWhileQueued(String(queued.body.run_id));
    expect(await removeQueued(t.service.deps, run)).toBe(true);
    expect(await removeQueued(t.service.deps, run)).toBe(false); // once
    expect((await t.service.deps.store.limits.read("cancel-remove"))?.queued).toBe(0);
    await finished(key, String(holding.body.run_id));
    // Nothing waits: the next call is admitted at once (not queued behind a phantom). Once the
    // worker is idle again (its process replaced after each run: on a busy machine that alone can
    // outlast the 2 s window).
    await t.workersIdle();
    const next = await t.call("POST", "/functions/sleep", { token: key, body: { ms: 10 } });
    expect(next.status).toBe(200);
    expect((await t.call("GET", `/runs/${queued.body.run_id}`, { token: key })).body).toMatchObject({ status: "failed", started_at: null });
    const usage = (await t.call("GET", "/usage", { token: key })).body;
    expect(usage.remaining.invocations).toBe(10_000 - 2); // the canceled one is given back
  }, 30_000);

  it("is passed over by a dispatcher that finds it first: not started, its lease given back, the queue counted down", async () => {
    const key = await t.newAccount("cancel-race", "one");
    await t.deploy("sleep", SLEEP, {}, key);
    // Long enough that the two behind it are still queued when one is ended, however slowly a busy machine answers.
    const holding = await t.call("POST", "/functions/sleep", { token: key, body: { ms: 3000 }, headers: async });
    const queued = await t.call("POST", "/functions/sleep", { token: key, body: { ms: 10 }, headers: async });
    const after = await t.call("POST", "/functions/sleep", { token: key, body: { ms: 10 }, headers: async });
    expect([queued.body.status, after.body.status]).toEqual(["queued", "queued"]);
    await endWhileQueued(String(queued.body.run_id));
    await finished(key, String(holding.body.run_id));
    // The next queued run starts in its place.
    expect((await finished(key, String(after.body.run_id))).status).toBe("succeeded");
    wakeQueue(t.service.deps, "cancel-race");
    const limits = await t.service.deps.store.limits.read("cancel-race");
    expect(limits?.queued).toBe(0);
    expect(Object.keys(limits?.leases ?? {})).toEqual([]);
    expect((await t.call("GET", `/runs/${queued.body.run_id}`, { token: key })).body).toMatchObject({ status: "failed", started_at: null });
  }, 30_000);
});
