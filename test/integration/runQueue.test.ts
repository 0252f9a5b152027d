/**
 * The run queue (issue #22, item 1), black-box against the real service: a run past the plan's
 * concurrency is queued, not refused, and started when a slot frees; `Prefer: respond-async`
 * answers at once; the queue is round-robin between an account's functions; `max_queued`
 * bounds it with 429 `queue_full`.
 */
import { DEFAULT_PLANS } from "../../lambdas/config/plans";
import { runScheduled } from "../../lambdas/schedule/runScheduled";
import { openEventStream } from "../helpers/eventStream";
import { expectError } from "../helpers/http";
import { startTestService, type TestService } from "../helpers/localService";
import { peakOverlap } from "../helpers/peakOverlap";

const plans = {
  ...DEFAULT_PLANS,
  one: { concurrency: 1, invocations_per_month: 10_000, max_timeout_seconds: 300, max_memory_mb: 2048, max_queued: 100 },
  tiny: { concurrency: 1, invocations_per_month: 10_000, max_timeout_seconds: 300, max_memory_mb: 2048, max_queued: 2 },
};

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ config: { plans, syncWaitSeconds: 2, workers: { perFunction: 4, total: 8, idleSeconds: 60 } } });
});
afterAll(() => t.destroy());

/** Sleeps `ms`, and says when it entered and left the automation. */
const STAMPED = `export default async (ms: number = 300, tag: string = "") => {
  const entered = Date.now();
  await new Promise((r) => setTimeout(r, ms));
  return { entered, left: Date.now(), tag };
}`;

interface Run {
  run_id: string;
  status: string;
  started_at: string | null;
  finished_at: string | null;
  queued_at: string;
  queue_reason?: string;
  result: { entered: number; left: number; tag: string } | null;
}

async function finished(token: string, runId: string, timeoutMs = 60_000): Promise<Run> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const run = (await t.call("GET", `/runs/${runId}`, { token })).body as Run;
    if (run.finished_at) return run;
    if (Date.now() > until) throw new Error(`run ${runId} did not end: ${JSON.stringify(run)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const async = { prefer: "respond-async" };

describe("the run queue", () => {
  it("queues runs past the plan's concurrency instead of refusing them, and starts each once a slot frees", async () => {
    const key = await t.newAccount("queue-one", "one");
    await t.deploy("stamped", STAMPED, {}, key);
    // Six sync calls of 700 ms runs on a plan of one run at a time, with a 2 s window: today the
    // ones that find no slot within the window are refused 429.
    const answers = await Promise.all(Array.from({ length: 6 }, () => t.call("POST", "/functions/stamped", { token: key, body: { ms: 700 } })));
    for (const answer of answers) expect([200, 202]).toContain(answer.status);
    const waited = answers.filter((answer) => answer.status === 202);
    expect(waited.length).toBeGreaterThan(0);
    for (const answer of waited) {
      expect(["queued", "running"]).toContain(answer.body.status);
      expect(answer.body.status_url).toContain(`/runs/${answer.body.run_id}`);
    }
    const runs = await Promise.all(answers.map((answer) => finished(key, String(answer.headers.get("x-run-id")))));
    expect(runs.map((run) => run.status)).toEqual(Array(6).fill("succeeded"));
    // Never two at once, measured inside the runs.
    expect(peakOverlap(runs.map((run) => ({ from: run.result!.entered, to: run.result!.left })))).toBe(1);
    // The wait shows: started_at is after queued_at by about the runs before it.
    const longest = Math.max(...runs.map((run) => Date.parse(run.started_at!) - Date.parse(run.queued_at)));
    expect(longest).toBeGreaterThanOrEqual(4 * 700);
    const usage = (await t.call("GET", "/usage", { token: key })).body;
    expect(usage.remaining.invocations).toBe(10_000 - 6);
  }, 60_000);

  it("answers Prefer: respond-async at once, with the run queued, before the run starts", async () => {
    const key = await t.newAccount("queue-async", "one");
    await t.deploy("stamped", STAMPED, {}, key);
    const busy = await t.call("POST", "/functions/stamped", { token: key, body: { ms: 1500 }, headers: async });
    expect(busy.status).toBe(202);
    const sent = Date.now();
    const queued = await t.call("POST", "/functions/stamped", { token: key, body: { ms: 10 }, headers: async });
    const answered = Date.now();
    expect(queued.status).toBe(202);
    expect(queued.body.status).toBe("queued");
    const waiting = (await t.call("GET", `/runs/${queued.body.run_id}`, { token: key })).body as Run;
    expect(waiting.status).toBe("queued");
    expect(waiting.queue_reason).toBe("plan_concurrency");
    // Its event stream says queued, then running once it starts, then its end.
    const stream = await openEventStream(t.url, `/runs/${queued.body.run_id}/events`, { token: key });
    await stream.ended;
    const statuses = stream.events.filter((event) => event.event === "status").map((event) => event.json.status);
    expect(statuses).toEqual(["queued", "running", "succeeded"]);
    const run = await finished(key, queued.body.run_id);
    expect(run.status).toBe("succeeded");
    // It answered before its run entered the automation (today it is held until the slot frees).
    expect(answered).toBeLessThan(run.result!.entered);
    expect(answered - sent).toBeLessThan(1000);
    expect((run as unknown as { queue_reason?: string }).queue_reason).toBeUndefined();
    await finished(key, busy.body.run_id);
  }, 60_000);

  it("serves an account's functions round-robin: a second function is not stuck behind the first one's backlog", async () => {
    const key = await t.newAccount("queue-fair", "one");
    await t.deploy("backlog", STAMPED, {}, key);
    await t.deploy("other", STAMPED, {}, key);
    const backlog = [];
    for (let i = 0; i < 6; i++) {
      const answer = await t.call("POST", "/functions/backlog", { token: key, body: { ms: 400, tag: `b${i}` }, headers: async });
      expect(answer.status).toBe(202);
      backlog.push(String(answer.body.run_id));
    }
    const other = await t.call("POST", "/functions/other", { token: key, body: { ms: 10, tag: "other" }, headers: async });
    expect(other.status).toBe(202);
    const runs = await Promise.all(backlog.map((id) => finished(key, id)));
    const otherRun = await finished(key, String(other.body.run_id));
    expect(otherRun.status).toBe("succeeded");
    // Oldest first within the backlog.
    const starts = runs.map((run) => Date.parse(run.started_at!));
    expect([...starts].sort((a, b) => a - b)).toEqual(starts);
    // The other function's run started before the backlog's third run (first come, first
    // served would start it after all six).
    expect(Date.parse(otherRun.started_at!)).toBeLessThan(starts[2]!);
  }, 60_000);

  it("bounds the queue by the plan's max_queued: past it, 429 queue_full with Retry-After, at once, nothing counted", async () => {
    const key = await t.newAccount("queue-tiny", "tiny");
    await t.deploy("stamped", STAMPED, {}, key);
    const running = await t.call("POST", "/functions/stamped", { token: key, body: { ms: 1500 }, headers: async });
    const first = await t.call("POST", "/functions/stamped", { token: key, body: { ms: 10 }, headers: async });
    const second = await t.call("POST", "/functions/stamped", { token: key, body: { ms: 10 }, headers: async });
    expect([running.status, first.status, second.status]).toEqual([202, 202, 202]);
    const started = Date.now();
    const refused = await t.call("POST", "/functions/stamped", { token: key, body: { ms: 10 } });
    expect(Date.now() - started).toBeLessThan(1000);
    const error = expectError(refused, 429, "queue_full");
    expect(error.details).toMatchObject({ limit: 2 });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    for (const answer of [running, first, second]) expect((await finished(key, String(answer.body.run_id))).status).toBe("succeeded");
    // The refused call is no run and no invocation.
    const logs = (await t.call("GET", "/functions/stamped/logs?limit=10", { token: key })).body.items;
    expect(logs).toHaveLength(3);
    const usage = (await t.call("GET", "/usage", { token: key })).body;
    expect(usage.remaining.invocations).toBe(10_000 - 3);
  }, 60_000);

  it("cancels a queued run: it never starts, its place in the queue is given back at once, and the runs behind it start", async () => {
    const key = await t.newAccount("queue-cancel", "tiny");
    await t.deploy("stamped", STAMPED, {}, key);
    const running = await t.call("POST", "/functions/stamped", { token: key, body: { ms: 1500, tag: "running" }, headers: async });
    const doomed = await t.call("POST", "/functions/stamped", { token: key, body: { ms: 10, tag: "doomed" }, headers: async });
    const behind = await t.call("POST", "/functions/stamped", { token: key, body: { ms: 10, tag: "behind" }, headers: async });
    expect([running.status, doomed.status, behind.status]).toEqual([202, 202, 202]);
    expect((await t.call("GET", `/runs/${doomed.body.run_id}`, { token: key })).body.status).toBe("queued");
    const canceled = await t.call("POST", `/runs/${doomed.body.run_id}/cancel`, { token: key });
    expect(canceled.status).toBe(200);
    expect(canceled.body).toMatchObject({ status: "canceled", started_at: null });
    // max_queued is 2: the canceled run's place is free again at once (another call is queued, not refused).
    const another = await t.call("POST", "/functions/stamped", { token: key, body: { ms: 10, tag: "another" }, headers: async });
    expect(another.status).toBe(202);
    for (const answer of [running, behind, another]) expect((await finished(key, String(answer.body.run_id))).status).toBe("succeeded");
    const after = (await t.call("GET", `/runs/${doomed.body.run_id}`, { token: key })).body as Run;
    expect(after).toMatchObject({ status: "canceled", started_at: null, result: null });
    expectError(await t.call("POST", `/runs/${doomed.body.run_id}/cancel`, { token: key }), 409, "run_finished");
  }, 60_000);

  it("hands a batch bigger than the plan's concurrency to the queue: every item runs, never more at once than the plan allows", async () => {
    const key = await t.newAccount("queue-batch", "one");
    await t.deploy("stamped", STAMPED, {}, key);
    const items = Array.from({ length: 6 }, (_, i) => ({ ms: 150, tag: `item-${i}` }));
    const accepted = await t.call("POST", "/functions/stamped/batch", { token: key, body: { items } });
    expect(accepted.status).toBe(202);
    const runs = await Promise.all((accepted.body.run_ids as string[]).map((runId) => finished(key, runId)));
    expect(runs.map((run) => run.status)).toEqual(Array(6).fill("succeeded"));
    expect(peakOverlap(runs.map((run) => ({ from: run.result?.entered ?? 0, to: run.result?.left ?? 0 })))).toBe(1);
    const batch = (await t.call("GET", `/batches/${accepted.body.batch_id}`, { token: key })).body;
    expect(batch.counts.succeeded).toBe(6);
    expect((await t.call("GET", "/usage", { token: key })).body.remaining.invocations).toBe(10_000 - 6);
  }, 60_000);

  it("refuses a batch the run queue has no room for, whole: 429 queue_full, nothing written or counted", async () => {
    const key = await t.newAccount("queue-batch-full", "tiny");
    await t.deploy("stamped", STAMPED, {}, key);
    // tiny: one run at a time and two queued, so at most three items fit now.
    const refused = await t.call("POST", "/functions/stamped/batch", { token: key, body: { items: Array.from({ length: 4 }, () => ({ ms: 10 })) } });
    const error = expectError(refused, 429, "queue_full");
    expect(error.details).toMatchObject({ limit: 2, requested: 4 });
    expect((await t.call("GET", "/functions/stamped/logs?limit=10", { token: key })).body.items).toHaveLength(0);
    expect((await t.call("GET", "/usage", { token: key })).body.remaining.invocations).toBe(10_000);
    const fits = await t.call("POST", "/functions/stamped/batch", { token: key, body: { items: Array.from({ length: 3 }, () => ({ ms: 10 })) } });
    expect(fits.status).toBe(202);
    for (const runId of fits.body.run_ids as string[]) expect((await finished(key, runId)).status).toBe("succeeded");
  }, 60_000);

  it("queues a scheduled firing past the plan's concurrency (today: a failed run), and skips the next firing while it waits", async () => {
    const key = await t.newAccount("queue-schedule", "one");
    await t.deploy("stamped", STAMPED, {}, key);
    await t.deploy("nightly", STAMPED, { schedule: "0 3 * * *" }, key);
    const holding = await t.call("POST", "/functions/stamped", { token: key, body: { ms: 1500 }, headers: async });
    expect(holding.status).toBe(202);
    const info = (await t.call("GET", "/functions/nightly/info", { token: key })).body;
    const firing = await runScheduled(t.service.deps, info.function_id, "2026-08-01T03:00:00.000Z");
    expect(firing.outcome).toBe("started");
    const runId = firing.outcome === "started" ? firing.runId : "";
    expect((await t.call("GET", `/runs/${runId}`, { token: key })).body).toMatchObject({ status: "queued", trigger: "schedule", queue_reason: "plan_concurrency" });
    const next = await runScheduled(t.service.deps, info.function_id, "2026-08-02T03:00:00.000Z");
    expect(next.outcome).toBe("skipped");
    expect((await finished(key, runId)).status).toBe("succeeded");
  }, 60_000);
});
