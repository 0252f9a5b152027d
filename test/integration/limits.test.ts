import { DEFAULT_PLANS } from "../../lambdas/config/plans";
import { runScheduled } from "../../lambdas/schedule/runScheduled";
import { UsageReport } from "../../lambdas/schemas/usageSchemas";
import { expectError } from "../helpers/http";
import { startTestService, type TestService } from "../helpers/localService";
import { peakOverlap } from "../helpers/peakOverlap";

const plans = {
  ...DEFAULT_PLANS,
  five: { concurrency: 5, invocations_per_month: 10_000, max_timeout_seconds: 300, max_memory_mb: 2048 },
  seven: { concurrency: 50, invocations_per_month: 7, max_timeout_seconds: 300, max_memory_mb: 2048 },
  one: { concurrency: 1, invocations_per_month: 10_000, max_timeout_seconds: 300, max_memory_mb: 2048 },
};

let t: TestService;
beforeAll(async () => {
  t = await startTestService({
    config: { plans, syncWaitSeconds: 1, workers: { perFunction: 12, total: 12, idleSeconds: 60 } },
  });
});
afterAll(() => t.destroy());


/** The run once it has ended. */
async function finished(token: string, runId: string) {
  for (;;) {
    const run = (await t.call("GET", `/runs/${runId}`, { token })).body;
    if (run.finished_at) return run;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const SLEEP = "export default async (ms: number = 300) => { await new Promise((r) => setTimeout(r, ms)); return ms; }";

describe("concurrency per account", () => {
  it("never has more runs in flight than the plan allows; the rest are queued (202), none refused", async () => {
    const key = await t.newAccount("five-at-a-time", "five");
    await t.deploy("sleeper", SLEEP, {}, key);
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => t.call("POST", "/functions/sleeper", { token: key, body: { ms: 400 } })),
    );
    // Runs answer 200, or 202 when they waited in the queue (or a cold start) past the 1 s sync window.
    const ok = responses.filter((r) => r.status === 200 || r.status === 202);
    expect(ok).toHaveLength(50);
    expect(responses.filter((r) => r.status === 202 && r.body.status === "queued").length).toBeGreaterThan(0);
    // Measured from the runs themselves: at no instant were more than five running.
    // Read one after another (fifty pollers at once would load the service they measure).
    const runs = [];
    for (const r of ok) runs.push(await finished(key, String(r.headers.get("x-run-id"))));
    const peak = peakOverlap(runs.map((run) => ({ from: Date.parse(run.started_at), to: Date.parse(run.finished_at) })));
    expect(peak).toBeLessThanOrEqual(5);
    expect(peak).toBeGreaterThanOrEqual(2);
    // Every one became a run.
    const logs = (await t.call("GET", "/functions/sleeper/logs?limit=100", { token: key })).body.items;
    expect(logs).toHaveLength(ok.length);
    // Fifty runs, five at a time, each on a fresh worker process: over 25 s on CI with another suite beside it.
  }, 120_000);

  it("limit − 1 runs, the limit waits inside the sync window, then answers 202 queued and starts when the slot frees", async () => {
    const key = await t.newAccount("one-at-a-time", "one");
    await t.deploy("hold", SLEEP, {}, key);
    const first = t.call("POST", "/functions/hold", { token: key, body: { ms: 2500 } });
    // The first holds the account's one slot (admitted: on a busy machine that can take longer than a moment).
    const slotsLeft = async () => (await t.call("GET", "/usage", { token: key })).body.remaining.concurrency;
    for (const deadline = Date.now() + 10_000; (await slotsLeft()) !== 0 && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await slotsLeft()).toBe(0);
    const started = Date.now();
    const second = await t.call("POST", "/functions/hold", { token: key, body: { ms: 10 } });
    expect(second.status).toBe(202);
    expect(second.body.status).toBe("queued");
    expect(Date.now() - started).toBeGreaterThanOrEqual(900); // it waited for a slot within its window
    expect((await first).status).toBe(202); // 2.5 s outlasts the 1 s sync window
    const run = await finished(key, String(second.body.run_id));
    expect(run.status).toBe("succeeded");
    expect(Date.parse(run.started_at)).toBeGreaterThanOrEqual(Date.parse(run.queued_at) + 1500);
    // The slot is free again: the next call is not queued. Once the worker is idle again (its
    // process replaced after each run: on a busy machine that alone can outlast the 1 s window).
    await t.workersIdle();
    expect((await t.call("POST", "/functions/hold", { token: key, body: { ms: 10 } })).status).toBe(200);
  });
});

describe("invocations per month", () => {
  it("is exact under concurrency: seven of twenty pass, the rest are 429 until next month", async () => {
    const key = await t.newAccount("seven-a-month", "seven");
    await t.deploy("counted", SLEEP, {}, key);
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => t.call("POST", "/functions/counted", { token: key, body: { ms: 5 } })),
    );
    // Admitted runs answer 200, or 202 when a cold start outlasts the 1 s sync window.
    expect(responses.filter((r) => r.status === 200 || r.status === 202)).toHaveLength(7);
    const refused = responses.filter((r) => r.status === 429);
    expect(refused).toHaveLength(13);
    const now = new Date();
    const nextMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
    for (const r of refused) {
      expectError(r, 429, "invocation_quota_exceeded");
      const retry = Number(r.headers.get("retry-after"));
      expect(Math.abs(retry - (nextMonth - Date.now()) / 1000)).toBeLessThan(30);
    }
    await Promise.all(responses.filter((r) => r.status !== 429).map((r) => finished(key, String(r.headers.get("x-run-id")))));
    const usage = (await t.call("GET", "/usage", { token: key })).body;
    expect(usage.remaining.invocations).toBe(0);
    expect(usage.total.invocations).toBe(7);

    // A scheduled firing refused by the quota is recorded, never silently lost.
    await t.call("PATCH", "/functions/counted", { token: key, body: { schedule: "0 0 1 1 *" } });
    const info = (await t.call("GET", "/functions/counted/info", { token: key })).body;
    const firing = await runScheduled(t.service.deps, info.function_id, "2026-08-01T00:00:00.000Z");
    expect(firing).toMatchObject({ outcome: "refused" });
    const [entry] = (await t.call("GET", "/functions/counted/logs?limit=1", { token: key })).body.items;
    expect(entry).toMatchObject({ trigger: "schedule", status: "failed", error: { code: "invocation_quota_exceeded" } });
  });
});

describe("GET /usage", () => {
  it("equals the sum of the runs made, per function and in total", async () => {
    const key = await t.newAccount("metered", "five");
    await t.deploy("a", SLEEP, {}, key);
    await t.deploy("b", SLEEP, {}, key);
    const ids: string[] = [];
    for (const [name, ms] of [["a", 20], ["a", 40], ["b", 30]] as const) {
      const r = await t.call("POST", `/functions/${name}`, { token: key, body: { ms } });
      ids.push(String(r.headers.get("x-run-id")));
    }
    const runs = await Promise.all(ids.map((id) => finished(key, id)));
    // A run is metered just after its end is recorded (recordRunLater): on a busy machine, after its answer.
    const readUsage = async () => (await t.call("GET", `/usage?month=${new Date().toISOString().slice(0, 7)}`, { token: key })).body;
    let usage = await readUsage();
    for (const deadline = Date.now() + 10_000; usage.total.invocations < 3 && Date.now() < deadline; usage = await readUsage()) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const sum = (list: typeof runs) => list.reduce((n, run) => n + run.duration_ms, 0);
    expect(usage.total.invocations).toBe(3);
    expect(usage.total.execution_ms).toBe(sum(runs));
    expect(usage.total.gb_seconds).toBeCloseTo((sum(runs) / 1000) * (1024 / 1024), 3);
    expect(usage.functions.map((f: { name: string; invocations: number }) => [f.name, f.invocations])).toEqual([["a", 2], ["b", 1]]);
    expect(usage.functions[0].execution_ms).toBe(sum(runs.filter((r) => r.function_name === "a")));
    expect(usage.limits).toEqual(plans.five);
    expect(usage.remaining).toEqual({ invocations: 10_000 - 3, concurrency: 5 });
    expect(UsageReport.parse(usage)).toEqual(usage); // the documented shape
    const past = (await t.call("GET", "/usage?month=2020-01", { token: key })).body;
    expect(past).toMatchObject({ total: { invocations: 0 }, functions: [], remaining: null });
    expectError(await t.call("GET", "/usage?month=2026-13", { token: key }), 400, "invalid_request");
  });
});

describe("plans", () => {
  it("an admin changes an account's plan, and the new limits apply at once", async () => {
    const key = await t.newAccount("upgraded", "one");
    expectError(await t.call("PUT", "/accounts/upgraded/plan", { token: key, body: { plan: "pro" } }), 403, "forbidden");
    expectError(await t.call("PUT", "/accounts/nobody-here/plan", { body: { plan: "pro" } }), 404, "account_not_found");
    expectError(await t.call("PUT", "/accounts/upgraded/plan", { body: { plan: "gold" } }), 400, "invalid_request");
    const changed = await t.call("PUT", "/accounts/upgraded/plan", { body: { plan: "pro" } });
    expect(changed.body).toMatchObject({ account: "upgraded", plan: "pro" });
    expect((await t.call("GET", "/usage", { token: key })).body.plan).toBe("pro");
    const long = await t.call("POST", "/functions", { token: key, body: { name: "long", code: SLEEP, timeout_seconds: 900 } });
    expect(long.status).toBe(201);
  });
});

describe("rate limiting per key", () => {
  it("answers 429 rate_limited with Retry-After past the burst, per key", async () => {
    const limited = await startTestService({ config: { rateLimit: { perSecond: 1, burst: 3 } } });
    try {
      const other = await limited.newAccount("other-key"); // uses one of the admin key's three
      const statuses = [200];
      for (let i = 0; i < 4; i++) statuses.push((await limited.call("GET", "/functions")).status);
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      const refused = expectError(await limited.call("GET", "/functions"), 429, "rate_limited");
      expect(refused.details).toEqual({ per_second: 1, burst: 3 });
      // Another key has its own bucket; open routes have none.
      expect((await limited.call("GET", "/functions", { token: other })).status).toBe(200);
      expect((await limited.call("GET", "/health", { token: null })).status).toBe(200);
    } finally {
      await limited.destroy();
    }
  });
});
