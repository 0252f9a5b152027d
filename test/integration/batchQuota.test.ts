import { DEFAULT_PLANS } from "../../lambdas/config/plans";
import { startTestService, type TestService } from "../helpers/localService";

// Quotas count each item of a batch, reserved for the whole batch by one conditional write:
// batches and single calls racing for the last invocations of a month never pass the quota.

const plans = { ...DEFAULT_PLANS, twenty: { concurrency: 4, invocations_per_month: 20, max_timeout_seconds: 60, max_memory_mb: 2048 } };
const QUICK = "export default async function run({ n }: { n: number }) { return n; }";

describe("a batch's items against the monthly quota", () => {
  let t: TestService;
  let token: string;

  beforeAll(async () => {
    t = await startTestService({ config: { plans, workers: { perFunction: 4, total: 4, idleSeconds: 60 } } });
    token = await t.newAccount("twenty", "twenty");
    await t.deploy("quick", QUICK, {}, token);
  }, 60_000);
  afterAll(async () => {
    await t?.destroy();
  });

  it("never admits more than the quota when batches and single calls race for it", async () => {
    const batches = Array.from({ length: 6 }, (_, b) =>
      t.call("POST", "/functions/quick/batch", { token, body: { items: Array.from({ length: 6 }, (_, i) => ({ n: b * 10 + i })) } }),
    );
    const singles = Array.from({ length: 10 }, (_, i) => t.call("POST", "/functions/quick", { token, body: { n: 100 + i }, headers: { prefer: "respond-async" } }));
    const [batchAnswers, singleAnswers] = await Promise.all([Promise.all(batches), Promise.all(singles)]);
    const acceptedItems = batchAnswers.filter((answer) => answer.status === 202).length * 6;
    const acceptedSingles = singleAnswers.filter((answer) => answer.status === 202).length;
    for (const answer of [...batchAnswers, ...singleAnswers].filter((answer) => answer.status !== 202)) {
      expect([answer.status, (answer.body as { error: { code: string } }).error.code]).toEqual([429, expect.stringMatching(/^(invocation_quota_exceeded|concurrency_limit_exceeded)$/)]);
    }
    expect(acceptedItems + acceptedSingles).toBeLessThanOrEqual(20);
    // Three batches fit (18), whatever the order; the rest went to single calls while there was room.
    expect(acceptedItems).toBeGreaterThanOrEqual(6);
    for (let i = 0; i < 200; i++) {
      const logs = (await t.call("GET", "/functions/quick/logs?limit=1000", { token })).body as { items: { status: string }[] };
      if (logs.items.length === acceptedItems + acceptedSingles && logs.items.every((run) => run.status === "succeeded")) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const usage = (await t.call("GET", "/usage", { token })).body as { total: { invocations: number }; remaining: { invocations: number } };
    expect(usage.total.invocations).toBe(acceptedItems + acceptedSingles);
    expect(usage.remaining.invocations).toBe(20 - acceptedItems - acceptedSingles);
  }, 60_000);
});
