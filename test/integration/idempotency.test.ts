import { startTestService, type TestService } from "../helpers/localService";

// Idempotency keys on invocations (shared/API.md): within 24 h, the same key (per account and
// function) with the same request starts no second run.

const SLOW = "export default async (ms: number = 300) => { await new Promise((r) => setTimeout(r, ms)); return { ms, at: Date.now() }; };";

describe("Idempotency-Key on invocations", () => {
  let t: TestService;

  beforeAll(async () => {
    t = await startTestService();
    await t.deploy("slow", SLOW);
    await t.deploy("other", SLOW);
  }, 60_000);

  afterAll(async () => {
    await t?.destroy();
  });

  const runsOf = async (name: string) => ((await t.call("GET", `/functions/${name}/logs`)).body as { items: unknown[] }).items.length;

  it("replays the first answer for the same key and request, with Idempotent-Replayed", async () => {
    const headers = { "idempotency-key": "order-1" };
    const first = await t.call("POST", "/functions/slow", { body: { ms: 50 }, headers });
    expect(first.status).toBe(200);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const again = await t.call("POST", "/functions/slow", { body: { ms: 50 }, headers });
    expect([again.status, again.body, again.headers.get("x-run-id"), again.headers.get("idempotent-replayed")]).toEqual([200, first.body, first.headers.get("x-run-id"), "true"]);
    // The same request by GET (parameters in the query, coerced to the same values) is the same request.
    const byGet = await t.call("GET", "/functions/slow?ms=50", { headers });
    expect([byGet.status, byGet.headers.get("x-run-id")]).toEqual([200, first.headers.get("x-run-id")]);
    expect(await runsOf("slow")).toBe(1);
  }, 30_000);

  it("answers 422 for the same key with other parameters, and keys are per function", async () => {
    const headers = { "idempotency-key": "order-2" };
    expect((await t.call("POST", "/functions/slow", { body: { ms: 10 }, headers })).status).toBe(200);
    const reused = await t.call("POST", "/functions/slow", { body: { ms: 11 }, headers });
    expect([reused.status, (reused.body as { error: { code: string } }).error.code]).toEqual([422, "idempotency_key_reused"]);
    const otherFunction = await t.call("POST", "/functions/other", { body: { ms: 10 }, headers });
    expect([otherFunction.status, otherFunction.headers.get("idempotent-replayed")]).toEqual([200, null]);
  }, 30_000);

  it("makes one run of five concurrent calls with one key", async () => {
    const before = await runsOf("slow");
    const headers = { "idempotency-key": "burst" };
    const answers = await Promise.all(Array.from({ length: 5 }, () => t.call("POST", "/functions/slow", { body: { ms: 400 }, headers })));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    expect(new Set(answers.map((answer) => answer.headers.get("x-run-id"))).size).toBe(1);
    expect(answers.filter((answer) => answer.headers.get("idempotent-replayed") === "true")).toHaveLength(4);
    expect(await runsOf("slow")).toBe(before + 1);
  }, 30_000);

  it("answers 202 at once for a replay with Prefer: respond-async while the first run goes on", async () => {
    const headers = { "idempotency-key": "async-1" };
    const before = await runsOf("slow");
    const first = t.call("POST", "/functions/slow", { body: { ms: 1500 }, headers });
    // The first call has claimed the key once its run is recorded (on a busy machine, maybe not within a moment).
    for (const deadline = Date.now() + 10_000; (await runsOf("slow")) === before && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const replay = await t.call("POST", "/functions/slow", { body: { ms: 1500 }, headers: { ...headers, prefer: "respond-async" } });
    expect([replay.status, replay.headers.get("idempotent-replayed")]).toEqual([202, "true"]);
    expect((await first).headers.get("x-run-id")).toBe((replay.body as { run_id: string }).run_id);
  }, 30_000);

  it("refuses a key that is empty or longer than 255 characters", async () => {
    const long = await t.call("POST", "/functions/slow", { body: { ms: 1 }, headers: { "idempotency-key": "k".repeat(256) } });
    expect([long.status, (long.body as { error: { code: string } }).error.code]).toEqual([400, "invalid_request"]);
  });
});
