import { DEFAULT_PLANS } from "../../lambdas/config/plans";
import { ECHO_FN } from "../helpers/code";
import { startTestService, type TestService } from "../helpers/localService";

// Batches (shared/API.md, "Runs: queue, cancel, retries, batches"): POST /functions/{ref}/batch
// starts one run per item (trigger batch), all checked before any starts; GET /batches/{id}
// counts them; quotas count each item; Idempotency-Key works as on an invocation.

const plans = {
  ...DEFAULT_PLANS,
  // Two at a time, so a batch of five starts in turns; five invocations a month.
  tiny: { concurrency: 2, invocations_per_month: 5, max_timeout_seconds: 60, max_memory_mb: 2048 },
};

const SLOW_ECHO = `export default async function run({ message, ms = 0 }: { message: string; ms?: number }) {
  await new Promise((r) => setTimeout(r, ms));
  return { echo: message };
}
`;

interface BatchAnswer {
  batch_id: string;
  run_ids: string[];
  status_url: string;
}
interface BatchBody {
  batch_id: string;
  total: number;
  counts: Record<string, number>;
  finished_at: string | null;
  function_name: string;
  version: string;
}

describe("batches", () => {
  let t: TestService;
  let tinyKey: string;
  let otherKey: string;

  beforeAll(async () => {
    t = await startTestService({ config: { plans, workers: { perFunction: 3, total: 4, idleSeconds: 60 } } });
    await t.deploy("echo", ECHO_FN);
    tinyKey = await t.newAccount("tiny-account", "tiny");
    await t.deploy("slow-echo", SLOW_ECHO, {}, tinyKey);
    otherKey = await t.newAccount("other-account", "pro");
  }, 60_000);

  afterAll(async () => {
    await t?.destroy();
  });

  const logsOf = async (name: string, token?: string) =>
    ((await t.call("GET", `/functions/${name}/logs`, { token })).body as { items: { run_id: string; trigger: string }[] }).items;
  const usage = async (token?: string) => (await t.call("GET", "/usage", { token })).body as { total: unknown; remaining: { invocations: number } };

  /** Reads the batch until every run has ended (finished_at set), for up to `waitMs`. */
  async function untilFinished(batchId: string, token?: string, waitMs = 30_000): Promise<BatchBody> {
    for (const deadline = Date.now() + waitMs; Date.now() < deadline; ) {
      const answer = await t.call("GET", `/batches/${batchId}`, { token });
      expect(answer.status).toBe(200);
      const body = answer.body as BatchBody;
      if (body.finished_at !== null) return body;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`batch ${batchId} did not finish`);
  }

  it("runs each item as a run with trigger batch, counts them and lists them", async () => {
    const answer = await t.call("POST", "/functions/echo/batch", { body: { items: [{ message: "a" }, { message: "b", times: 2 }, { message: "c" }] } });
    expect(answer.status).toBe(202);
    const accepted = answer.body as BatchAnswer;
    expect(accepted.batch_id).toMatch(/^batch_[0-9a-z]{26}$/);
    expect(accepted.run_ids).toHaveLength(3);
    expect(accepted.status_url).toBe(`${t.url}/batches/${accepted.batch_id}`);
    expect(answer.headers.get("location")).toBe(accepted.status_url);
    // Every run exists at once (queued or later), and the batch counts them all.
    for (const runId of accepted.run_ids) {
      const run = await t.call("GET", `/runs/${runId}`);
      expect(run.status).toBe(200);
      expect(run.body).toMatchObject({ run_id: runId, trigger: "batch", batch_id: accepted.batch_id });
    }
    const finished = await untilFinished(accepted.batch_id);
    expect(finished).toMatchObject({ batch_id: accepted.batch_id, total: 3, function_name: "echo", version: "1" });
    expect(finished.counts).toEqual({ queued: 0, running: 0, succeeded: 3, failed: 0, timed_out: 0, canceled: 0 });
    const runs = await Promise.all(accepted.run_ids.map(async (runId) => (await t.call("GET", `/runs/${runId}`)).body as { status: string; result: unknown; trigger: string; finished_at: string }));
    expect(runs.map((run) => [run.status, run.trigger, run.result])).toEqual([
      ["succeeded", "batch", { echo: ["a"] }],
      ["succeeded", "batch", { echo: ["b", "b"] }],
      ["succeeded", "batch", { echo: ["c"] }],
    ]);
    expect(finished.finished_at).toBe(runs.map((run) => run.finished_at).sort().at(-1));
    // Listed in the order of the items, a page at a time.
    const page1 = await t.call("GET", `/batches/${accepted.batch_id}/runs?limit=2`);
    expect(page1.status).toBe(200);
    const first = page1.body as { items: { index: number; run_id: string; status: string }[]; next_cursor: string | null };
    expect(first.items.map((run) => [run.index, run.run_id, run.status])).toEqual([
      [0, accepted.run_ids[0], "succeeded"],
      [1, accepted.run_ids[1], "succeeded"],
    ]);
    const page2 = (await t.call("GET", `/batches/${accepted.batch_id}/runs?limit=2&cursor=${first.next_cursor}`)).body as typeof first;
    expect([page2.items.map((run) => run.run_id), page2.next_cursor]).toEqual([[accepted.run_ids[2]], null]);
    const badCursor = await t.call("GET", `/batches/${accepted.batch_id}/runs?cursor=nope`);
    expect([badCursor.status, (badCursor.body as { error: { code: string } }).error.code]).toEqual([400, "invalid_request"]);
    // The function's logs show them as batch runs.
    const logs = await logsOf("echo");
    expect(logs.filter((entry) => accepted.run_ids.includes(entry.run_id)).map((entry) => entry.trigger)).toEqual(["batch", "batch", "batch"]);
  }, 60_000);

  it("records every run of a batch of 260 before its 202 (BatchWrite in chunks) and lists them in pages of 100", async () => {
    const answer = await t.call("POST", "/functions/echo/batch", { body: { items: Array.from({ length: 260 }, (_, i) => ({ message: `m${i}` })) } });
    expect(answer.status).toBe(202);
    const { batch_id, run_ids } = answer.body as BatchAnswer;
    expect(new Set(run_ids).size).toBe(260);
    // At once: the batch counts all 260 and the last item's run is there.
    const now = (await t.call("GET", `/batches/${batch_id}`)).body as BatchBody;
    expect(Object.values(now.counts).reduce((a, b) => a + b, 0)).toBe(260);
    expect((await t.call("GET", `/runs/${run_ids[259]}`)).status).toBe(200);
    // 260 runs on three workers: a minute or more on a busy 2-core machine.
    const finished = await untilFinished(batch_id, undefined, 150_000);
    expect(finished.counts.succeeded).toBe(260);
    const listed: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = (await t.call("GET", `/batches/${batch_id}/runs${cursor ? `?cursor=${cursor}` : ""}`)).body as { items: { run_id: string }[]; next_cursor: string | null };
      listed.push(...page.items.map((run) => run.run_id));
      cursor = page.next_cursor;
      pages++;
    } while (cursor);
    expect([pages, listed]).toEqual([3, run_ids]);
    const big = await t.call("GET", `/batches/${batch_id}/runs?limit=1000`);
    expect((big.body as { items: unknown[] }).items).toHaveLength(260);
    expect((await t.call("GET", `/batches/${batch_id}/runs?limit=1001`)).status).toBe(400);
  }, 180_000);

  it("refuses a batch with bad items whole, naming each bad item's index, and writes nothing", async () => {
    const runsBefore = (await logsOf("echo")).length;
    const usageBefore = await usage();
    const bad = await t.call("POST", "/functions/echo/batch", { body: { items: [{ message: "ok" }, { message: 3 }, "text", { message: "x", nope: 1 }] } });
    expect(bad.status).toBe(400);
    const error = (bad.body as { error: { code: string; details: { items: { index: number; parameters: { name: string; problem: string }[]; received?: string }[] } } }).error;
    expect(error.code).toBe("invalid_parameters");
    expect(error.details.items.map((item) => item.index)).toEqual([1, 2, 3]);
    expect(error.details.items[0]?.parameters).toEqual([expect.objectContaining({ name: "message", problem: "wrong_type" })]);
    expect(error.details.items[1]).toMatchObject({ index: 2, parameters: [], received: "string" });
    expect(error.details.items[2]?.parameters).toEqual([expect.objectContaining({ name: "nope", problem: "unknown" })]);
    const tooMany = await t.call("POST", "/functions/echo/batch", { body: { items: Array.from({ length: 1001 }, () => ({ message: "m" })) } });
    expect([tooMany.status, (tooMany.body as { error: { code: string; details: unknown } }).error]).toEqual([
      400,
      expect.objectContaining({ code: "batch_too_large", details: { max: 1000, count: 1001 } }),
    ]);
    const empty = await t.call("POST", "/functions/echo/batch", { body: { items: [] } });
    expect([empty.status, (empty.body as { error: { code: string } }).error.code]).toEqual([400, "batch_empty"]);
    const notAList = await t.call("POST", "/functions/echo/batch", { body: { items: { message: "a" } } });
    expect([notAList.status, (notAList.body as { error: { code: string } }).error.code]).toEqual([400, "invalid_request"]);
    const nonObjects = await t.call("POST", "/functions/echo/batch", { body: { items: [1, null, ["a"]] } });
    expect(nonObjects.status).toBe(400);
    expect((nonObjects.body as { error: { details: { items: { index: number; received: string }[] } } }).error.details.items).toEqual([
      expect.objectContaining({ index: 0, received: "number" }),
      expect.objectContaining({ index: 1, received: "null" }),
      expect.objectContaining({ index: 2, received: "array" }),
    ]);
    expect((await logsOf("echo")).length).toBe(runsBefore);
    expect(await usage()).toEqual(usageBefore);
  }, 30_000);

  it("refuses whole a batch the month's quota cannot cover, then counts each item of one it can", async () => {
    const before = await usage(tinyKey);
    expect(before.remaining.invocations).toBe(5);
    const refused = await t.call("POST", "/functions/slow-echo/batch", { token: tinyKey, body: { items: Array.from({ length: 6 }, (_, i) => ({ message: `m${i}` })) } });
    expect(refused.status).toBe(429);
    expect((refused.body as { error: { code: string; details: unknown } }).error).toMatchObject({
      code: "invocation_quota_exceeded",
      details: { limit: 5, used: 0, requested: 6 },
    });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await logsOf("slow-echo", tinyKey)).toEqual([]);
    expect(await usage(tinyKey)).toEqual(before);
    // Four fit; the plan runs two at a time, so they start in turns, and all end.
    const accepted = await t.call("POST", "/functions/slow-echo/batch", { token: tinyKey, body: { items: Array.from({ length: 4 }, (_, i) => ({ message: `m${i}`, ms: 300 })) } });
    expect(accepted.status).toBe(202);
    const { batch_id } = accepted.body as BatchAnswer;
    expect((await usage(tinyKey)).remaining.invocations).toBe(1);
    // The one left is there for a single call, and then none: the batch's items were counted.
    const finished = await untilFinished(batch_id, tinyKey);
    expect(finished.counts).toEqual({ queued: 0, running: 0, succeeded: 4, failed: 0, timed_out: 0, canceled: 0 });
    expect((await t.call("POST", "/functions/slow-echo", { token: tinyKey, body: { message: "single" } })).status).toBe(200);
    const over = await t.call("POST", "/functions/slow-echo", { token: tinyKey, body: { message: "one too many" } });
    expect([over.status, (over.body as { error: { code: string } }).error.code]).toEqual([429, "invocation_quota_exceeded"]);
    const again = await t.call("POST", "/functions/slow-echo/batch", { token: tinyKey, body: { items: [{ message: "x" }] } });
    expect([again.status, (again.body as { error: { code: string } }).error.code]).toEqual([429, "invocation_quota_exceeded"]);
    const usageAfter = (await usage(tinyKey)).total as { invocations: number };
    expect(usageAfter.invocations).toBe(5);
  }, 60_000);

  it("replays a batch for the same Idempotency-Key and items, and refuses the key for other items", async () => {
    const headers = { "idempotency-key": "nightly-1" };
    const items = [{ message: "p" }, { message: "q" }];
    const first = await t.call("POST", "/functions/echo/batch", { body: { items }, headers });
    expect([first.status, first.headers.get("idempotent-replayed")]).toEqual([202, null]);
    const again = await t.call("POST", "/functions/echo/batch", { body: { items }, headers });
    expect([again.status, again.body, again.headers.get("idempotent-replayed")]).toEqual([202, first.body, "true"]);
    const other = await t.call("POST", "/functions/echo/batch", { body: { items: [{ message: "p" }] }, headers });
    expect([other.status, (other.body as { error: { code: string } }).error.code]).toEqual([422, "idempotency_key_reused"]);
    // An invocation under the batch's key: refused too, naming the batch the key went to.
    const invocation = await t.call("POST", "/functions/echo", { body: { message: "p" }, headers });
    expect([invocation.status, invocation.body]).toMatchObject([422, { error: { code: "idempotency_key_reused", details: { batch_id: (first.body as BatchAnswer).batch_id } } }]);
    expect((invocation.body as { error: { details: Record<string, unknown> } }).error.details).not.toHaveProperty("run_id");
    await untilFinished((first.body as BatchAnswer).batch_id);
    const runs = (await logsOf("echo")).filter((entry) => (first.body as BatchAnswer).run_ids.includes(entry.run_id));
    expect(runs).toHaveLength(2);
  }, 30_000);

  it("counts its canceled runs, so that its counts add up to its total", async () => {
    await t.deploy("sleepy-echo", SLOW_ECHO);
    const answer = await t.call("POST", "/functions/sleepy-echo/batch", { body: { items: [{ message: "a" }, { message: "b", ms: 5_000 }, { message: "c", ms: 5_000 }] } });
    expect(answer.status).toBe(202);
    const { batch_id, run_ids } = answer.body as BatchAnswer;
    // Canceled at once, queued or running (each waits 5 s): both end canceled.
    const canceled = await Promise.all(run_ids.slice(1).map((runId) => t.call("POST", `/runs/${runId}/cancel`)));
    const finished = await untilFinished(batch_id);
    const ended = await Promise.all(run_ids.map(async (runId) => ((await t.call("GET", `/runs/${runId}`)).body as { status: string }).status));
    const expected = { queued: 0, running: 0, succeeded: 0, failed: 0, timed_out: 0, canceled: 0 };
    for (const status of ended) expected[status as keyof typeof expected]++;
    expect(finished.counts).toEqual(expected);
    expect(Object.values(finished.counts).reduce((sum, n) => sum + n, 0)).toBe(3);
    expect(canceled.map((call) => call.status)).toEqual([200, 200]);
    expect(expected.canceled).toBe(2);
  }, 30_000);

  it("answers 404 for another account's batch and its runs", async () => {
    const answer = await t.call("POST", "/functions/echo/batch", { body: { items: [{ message: "mine" }] } });
    const { batch_id } = answer.body as BatchAnswer;
    for (const path of [`/batches/${batch_id}`, `/batches/${batch_id}/runs`, "/batches/batch_nope", "/batches/run_01hzzzzzzzzzzzzzzzzzzzzzzz"]) {
      const other = await t.call("GET", path, { token: otherKey });
      expect([path, other.status, (other.body as { error: { code: string } }).error.code]).toEqual([path, 404, "batch_not_found"]);
    }
    await untilFinished(batch_id);
  }, 30_000);

  it("runs the version X-Function-Version names", async () => {
    await t.call("PATCH", "/functions/echo", { body: { code: "export default async function run({ message }: { message: string }) { return { v2: message }; }" } });
    const answer = await t.call("POST", "/functions/echo/batch", { body: { items: [{ message: "old", times: 1 }] }, headers: { "x-function-version": "1" } });
    expect(answer.status).toBe(202);
    const { batch_id, run_ids } = answer.body as BatchAnswer;
    const finished = await untilFinished(batch_id);
    expect(finished.version).toBe("1");
    const run = (await t.call("GET", `/runs/${run_ids[0]}`)).body as { result: unknown; version: string };
    expect([run.version, run.result]).toEqual(["1", { echo: ["old"] }]);
    const missing = await t.call("POST", "/functions/echo/batch", { body: { items: [{ message: "x" }] }, headers: { "x-function-version": "9" } });
    expect([missing.status, (missing.body as { error: { code: string } }).error.code]).toEqual([404, "version_not_found"]);
  }, 60_000);
});
