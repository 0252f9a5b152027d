/**
 * Retries (issue #22, item 4): a run of an async call that fails runs again after its backoff,
 * as a new attempt of the same run, against the real service (dynalite, real worker processes).
 */
import { DEFAULT_PLANS } from "../../lambdas/config/plans";
import { runScheduled } from "../../lambdas/schedule/runScheduled";
import { type AttemptCounter, startAttemptCounter } from "../helpers/attemptCounter";
import { type TestService, startTestService } from "../helpers/localService";
import { type WebhookReceiver, startWebhookReceiver } from "../helpers/webhookReceiver";

/** Fails (throws) until the counter says attempt `succeedAt`, then returns which attempt it was. */
const FLAKY = `import { artifacts } from "browserfn/runtime";
export default async (counter: string, succeedAt: number = 3) => {
  const attempt = Number(await (await fetch(counter)).text());
  console.log("attempt " + attempt + " ran");
  await artifacts.save("own-" + attempt + ".txt", "attempt " + attempt);
  await artifacts.save("last.txt", String(attempt));
  if (attempt < succeedAt) throw new Error("attempt " + attempt + " fails");
  return { attempt };
}`;
/** Outlasts its timeout on the first attempt, then returns at once. */
const SLOW_FIRST = `export default async (counter: string) => {
  const attempt = Number(await (await fetch(counter)).text());
  if (attempt === 1) await new Promise((r) => setTimeout(r, 10_000));
  return { attempt };
}`;
const async = { prefer: "respond-async" };
const WEBHOOKS = { webhooks: { retryBaseMs: 20, pollMs: 50 } };
/** One run at a time and one waiting: a retry finds the queue full while another run waits. */
const PLANS = { plans: { ...DEFAULT_PLANS, narrow: { ...DEFAULT_PLANS.free!, concurrency: 1, max_queued: 1 } } };

let t: TestService;
let counter: AttemptCounter;
let receiver: WebhookReceiver;

beforeAll(async () => {
  t = await startTestService({ config: { ...WEBHOOKS, ...PLANS } });
  counter = await startAttemptCounter();
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver.close();
  await counter.close();
  await t.destroy();
});

async function ended(runId: string, token: string, seen?: (run: any) => void) { // eslint-disable-line @typescript-eslint/no-explicit-any
  for (let i = 0; i < 1200; i++) {
    const run = (await t.call("GET", `/runs/${runId}`, { token })).body;
    seen?.(run);
    if (run.finished_at) return run;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`run ${runId} did not end`);
}

describe("retries", () => {
  it("runs an async call's failed run again as attempts of the same run, with backoff; one invocation, every attempt's time metered, one webhook", async () => {
    const key = await t.newAccount("retried", "pro");
    const created = await t.deploy("flaky", FLAKY, { retries: { max_attempts: 3, backoff_seconds: 1 }, webhooks: [{ url: receiver.url }] }, key);
    expect(created.retries).toEqual({ max_attempts: 3, backoff_seconds: 1 });
    const answer = await t.call("POST", "/functions/flaky", { token: key, body: { counter: `${counter.url}flaky-async` }, headers: async });
    expect(answer.status).toBe(202);
    const statuses = new Set<string>();
    const run = await ended(String(answer.body.run_id), key, (seen) => {
      if (seen.status === "queued" && seen.attempts.length > 0) {
        expect(seen).toMatchObject({ queue_reason: "retry_backoff", max_attempts: 3 });
        expect(Date.parse(seen.retry_at)).toBeGreaterThan(Date.parse(seen.attempts.at(-1).finished_at));
        statuses.add(`waiting for ${seen.attempt}`);
      }
    });
    expect(statuses.size).toBeGreaterThan(0); // it was seen queued for a retry, at least once
    expect(run).toMatchObject({ status: "succeeded", result: { attempt: 3 }, attempt: 3, max_attempts: 3, error: null });
    expect(run.attempts.map((a: { attempt: number; status: string; error: { code: string } | null }) => [a.attempt, a.status, a.error?.code ?? null])).toEqual([
      [1, "failed", "function_error"],
      [2, "failed", "function_error"],
      [3, "succeeded", null],
    ]);
    expect(counter.count("flaky-async")).toBe(3);
    // Backoff: 1 s before attempt 2, 2 s (doubled) before attempt 3.
    const [a1, a2, a3] = run.attempts;
    expect(Date.parse(a2.started_at)).toBeGreaterThanOrEqual(Date.parse(a1.finished_at) + 1000);
    expect(Date.parse(a3.started_at)).toBeGreaterThanOrEqual(Date.parse(a2.finished_at) + 2000);
    expect(run.started_at).toBe(a3.started_at);
    // The logs say which attempt wrote them.
    const logs = String(run.logs);
    for (const n of [1, 2, 3]) expect(logs).toContain(`--- attempt ${n} of 3 ---\n`);
    expect(logs.indexOf("attempt 1 ran")).toBeGreaterThan(logs.indexOf("--- attempt 1 of 3 ---"));
    expect(logs.indexOf("attempt 2 ran")).toBeGreaterThan(logs.indexOf("--- attempt 2 of 3 ---"));
    expect(logs.indexOf("attempt 3 ran")).toBeGreaterThan(logs.indexOf("--- attempt 3 of 3 ---"));
    // The artifacts say which attempt saved them (a name saved again is the later attempt's).
    const listed = (await t.call("GET", `/runs/${run.run_id}/artifacts`, { token: key })).body.items;
    expect(listed.map((a: { name: string; attempt: number }) => [a.name, a.attempt])).toEqual([
      ["last.txt", 3],
      ["own-1.txt", 1],
      ["own-2.txt", 2],
      ["own-3.txt", 3],
    ]);
    // One invocation; the execution time of all three attempts.
    const usage = (await t.call("GET", "/usage", { token: key })).body;
    expect(usage.total.invocations).toBe(1);
    expect(usage.total.execution_ms).toBe(a1.duration_ms + a2.duration_ms + a3.duration_ms);
    // One webhook, at the run's final end.
    const [hook] = await receiver.waitFor(1);
    expect(JSON.parse(hook!.body)).toMatchObject({ type: "run.succeeded" });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(receiver.received.filter((r) => r.body.includes(run.run_id))).toHaveLength(1);
  }, 120_000);

  it("does not retry a sync call: its caller sees the failure", async () => {
    const key = await t.newAccount("sync-caller", "pro");
    await t.deploy("flaky", FLAKY, { retries: { max_attempts: 3, backoff_seconds: 1 } }, key);
    const answer = await t.call("POST", "/functions/flaky", { token: key, body: { counter: `${counter.url}flaky-sync` } });
    expect(answer.body.error).toMatchObject({ code: "function_error" });
    const runId = String(answer.headers.get("x-run-id"));
    await new Promise((resolve) => setTimeout(resolve, 2500)); // past the backoff of a retry
    const run = (await t.call("GET", `/runs/${runId}`, { token: key })).body;
    expect(run).toMatchObject({ status: "failed", attempt: 1, max_attempts: 1 });
    expect(run.attempts).toHaveLength(1);
    expect(counter.count("flaky-sync")).toBe(1);
  }, 60_000);

  it("does not retry a sync call whose window ran out (it answered 202): it is still a sync call", async () => {
    const short = await startTestService({ config: { syncWaitSeconds: 1 } });
    try {
      const key = await short.newAccount("short-window", "pro");
      const slowFail = `export default async (counter: string) => { await fetch(counter); await new Promise((r) => setTimeout(r, 2000)); throw new Error("late failure"); }`;
      expect((await short.call("POST", "/functions", { token: key, body: { name: "late", code: slowFail, retries: { max_attempts: 3, backoff_seconds: 1 } } })).status).toBe(201);
      const answer = await short.call("POST", "/functions/late", { token: key, body: { counter: `${counter.url}late` } });
      expect(answer.status).toBe(202);
      let run: any; // eslint-disable-line @typescript-eslint/no-explicit-any
      for (let i = 0; i < 200 && !run?.finished_at; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        run = (await short.call("GET", `/runs/${answer.body.run_id}`, { token: key })).body;
      }
      expect(run).toMatchObject({ status: "failed", attempt: 1, max_attempts: 1, error: { code: "function_error" } });
      await new Promise((resolve) => setTimeout(resolve, 2000)); // past the backoff a retry would wait
      expect((await short.call("GET", `/runs/${answer.body.run_id}`, { token: key })).body.attempts).toHaveLength(1);
      expect(counter.count("late")).toBe(1);
    } finally {
      await short.destroy();
    }
  }, 60_000);

  it("retries a scheduled run", async () => {
    const key = await t.newAccount("scheduled", "pro");
    const fn = await t.deploy(
      "nightly",
      FLAKY,
      { schedule: "0 0 1 1 *", schedule_params: { counter: `${counter.url}nightly`, succeedAt: 2 }, retries: { max_attempts: 2, backoff_seconds: 1 } },
      key,
    );
    const firing = await runScheduled(t.service.deps, fn.function_id, "2026-01-01T00:00:00.000Z");
    if (firing.outcome !== "started") throw new Error(`the firing was ${firing.outcome}: ${firing.reason}`);
    const run = await ended(firing.runId, key);
    expect(run).toMatchObject({ trigger: "schedule", status: "succeeded", attempt: 2, max_attempts: 2, result: { attempt: 2 } });
    expect(run.attempts.map((a: { status: string }) => a.status)).toEqual(["failed", "succeeded"]);
  }, 60_000);

  it("retries a timed_out attempt", async () => {
    const key = await t.newAccount("slow-caller", "pro");
    await t.deploy("slow-first", SLOW_FIRST, { timeout_seconds: 2, retries: { max_attempts: 2, backoff_seconds: 1 } }, key);
    const answer = await t.call("POST", "/functions/slow-first", { token: key, body: { counter: `${counter.url}slow` }, headers: async });
    const run = await ended(String(answer.body.run_id), key);
    expect(run).toMatchObject({ status: "succeeded", attempt: 2, result: { attempt: 2 } });
    expect(run.attempts.map((a: { status: string }) => a.status)).toEqual(["timed_out", "succeeded"]);
  }, 60_000);

  it("says in the run's logs why it ended with its first attempt when the queue was full for its retry", async () => {
    const token = await t.newAccount("narrow-account", "narrow");
    await t.deploy("fails-late", `export default async () => { console.log("working"); await new Promise((r) => setTimeout(r, 1500)); throw new Error("late failure"); }`, { retries: { max_attempts: 2, backoff_seconds: 1 } }, token);
    await t.deploy("waits", `export default async () => { await new Promise((r) => setTimeout(r, 4000)); return "done"; }`, {}, token);
    const failing = await t.call("POST", "/functions/fails-late", { token, headers: async, body: {} });
    expect(failing.status).toBe(202);
    // Once it runs (its slot taken), another run waits in the queue's one place.
    for (let i = 0; i < 200 && (await t.call("GET", `/runs/${failing.body.run_id}`, { token })).body.status !== "running"; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    const waiting = await t.call("POST", "/functions/waits", { token, headers: async, body: {} });
    expect(waiting.status).toBe(202);
    const run = await ended(failing.body.run_id, token);
    expect([run.status, run.attempt, run.attempts.length]).toEqual(["failed", 1, 1]);
    expect(run.logs).toContain("working");
    expect(run.logs).toMatch(/\[browserfn\] attempt 2 of 2 was not run: The 'narrow' plan queues at most 1 runs/);
    expect((await ended(waiting.body.run_id, token)).status).toBe("succeeded");
  }, 60_000);

  it("refuses retries out of range, naming the field; PATCH sets and null removes them", async () => {
    const key = await t.newAccount("validating", "pro");
    const cases: [unknown, string][] = [
      [{ max_attempts: 0 }, "retries.max_attempts"],
      [{ max_attempts: 11 }, "retries.max_attempts"],
      [{ max_attempts: 2.5 }, "retries.max_attempts"],
      [{ backoff_seconds: 0 }, "retries.backoff_seconds"],
      [{ backoff_seconds: 3601 }, "retries.backoff_seconds"],
      [{ tries: 2 }, "retries"],
      [3, "retries"],
    ];
    for (const [retries, field] of cases) {
      const answer = await t.call("POST", "/functions", { token: key, body: { name: "bad", code: FLAKY, retries } });
      expect([answer.status, answer.body.error.code]).toEqual([400, "invalid_request"]);
      expect(answer.body.error.details.issues.map((issue: { field: string }) => issue.field)).toEqual([field]);
    }
    expect((await t.call("GET", "/functions/bad/info", { token: key })).status).toBe(404);
    const plain = await t.deploy("plain", FLAKY, {}, key);
    expect(plain.retries).toEqual({ max_attempts: 1, backoff_seconds: 10 });
    const patched = await t.call("PATCH", "/functions/plain", { token: key, body: { retries: { max_attempts: 4 } } });
    expect(patched.body.retries).toEqual({ max_attempts: 4, backoff_seconds: 10 });
    expect((await t.call("PATCH", "/functions/plain", { token: key, body: { retries: { backoff_seconds: 0 } } })).status).toBe(400);
    expect((await t.call("GET", "/functions/plain/info", { token: key })).body.retries).toEqual({ max_attempts: 4, backoff_seconds: 10 });
    const removed = await t.call("PATCH", "/functions/plain", { token: key, body: { retries: null } });
    expect(removed.body.retries).toEqual({ max_attempts: 1, backoff_seconds: 10 });
  }, 60_000);
});
