/**
 * One tenant takes every worker (issue #26, item 3): the machine's workers are shared by all
 * accounts. With one account's backlog holding every worker, another account's run waits
 * (queued, `machine_busy`, no 429 after its window) and gets the next free worker, ahead of
 * the busy account's next run. And two services on one store never exceed a plan's limit and
 * start each queued run once (issue #22).
 */
import { DEFAULT_PLANS } from "../../lambdas/config/plans";
import { createDynaliteClients } from "../../lambdas/local/dynaliteClient";
import { startTestService, type TestService } from "../helpers/localService";
import { peakOverlap } from "../helpers/peakOverlap";

const STAMPED = `export default async (ms: number = 300) => {
  const entered = Date.now();
  await new Promise((r) => setTimeout(r, ms));
  return { entered, left: Date.now() };
}`;

async function finished(t: TestService, token: string, runId: string) {
  for (let i = 0; i < 1200; i++) {
    const run = (await t.call("GET", `/runs/${runId}`, { token })).body;
    if (run.finished_at) return run;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`run ${runId} did not end`);
}

describe("the machine's workers between accounts", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ config: { syncWaitSeconds: 2, workers: { perFunction: 2, total: 2, idleSeconds: 60 } } });
  });
  afterAll(() => t.destroy());

  it("gives a waiting account the next free worker ahead of the busy account's backlog, and never answers it 429", async () => {
    const busyKey = await t.newAccount("busy-tenant", "pro");
    const otherKey = await t.newAccount("other-tenant", "free");
    await t.deploy("hog", STAMPED, {}, busyKey);
    await t.deploy("small", STAMPED, {}, otherKey);
    const backlog: string[] = [];
    for (let i = 0; i < 6; i++) {
      const answer = await t.call("POST", "/functions/hog", { token: busyKey, body: { ms: 2500 }, headers: { prefer: "respond-async" } });
      expect(answer.status).toBe(202);
      backlog.push(String(answer.body.run_id));
    }
    // Both workers are the busy account's now; its other four runs wait for the machine (the
    // last one's reason is recorded once the runtime finds no worker for it: on a busy machine
    // that can take longer than a moment).
    const lastOfBacklog = async () => (await t.call("GET", `/runs/${backlog[5]}`, { token: busyKey })).body;
    let waiting = await lastOfBacklog();
    for (const deadline = Date.now() + 10_000; waiting.status === "queued" && waiting.queue_reason === undefined && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      waiting = await lastOfBacklog();
    }
    expect(waiting).toMatchObject({ status: "queued", queue_reason: "machine_busy" });
    // Today: 429 concurrency_limit_exceeded once the window is out.
    const answer = await t.call("POST", "/functions/small", { token: otherKey, body: { ms: 10 } });
    expect([200, 202]).toContain(answer.status);
    const other = await finished(t, otherKey, String(answer.headers.get("x-run-id")));
    expect(other.status).toBe("succeeded");
    const runs = await Promise.all(backlog.map((id) => finished(t, busyKey, id)));
    const busyStarts = runs.map((run) => run.result.entered as number).sort((a, b) => a - b);
    // The other account's run got the first worker that freed (it then had a cold start of its
    // own, while the busy account's second free worker was warm): it went in before the busy
    // account's fourth run. First come, first served would put it after all six.
    expect(other.result.entered).toBeLessThan(busyStarts[3]!);
  }, 90_000);
});

describe("two services on one store", () => {
  let a: TestService;
  let b: TestService;
  const plans = { ...DEFAULT_PLANS, two: { concurrency: 2, invocations_per_month: 10_000, max_timeout_seconds: 300, max_memory_mb: 2048, max_queued: 100 } };
  beforeAll(async () => {
    a = await startTestService({ config: { plans, syncWaitSeconds: 1, workers: { perFunction: 4, total: 8, idleSeconds: 60 } } });
    // B keeps everything in A's store (its own dynalite is left empty).
    const shared = createDynaliteClients(a.service.dynamoEndpoint, a.service.storeSecret, 10_000);
    b = await startTestService({
      adminKey: a.adminKey,
      config: { plans, syncWaitSeconds: 1, workers: { perFunction: 4, total: 8, idleSeconds: 60 } },
      serviceOptions: { wrapStoreClient: () => shared.doc },
    });
  }, 60_000);
  afterAll(async () => {
    await b?.destroy();
    await a?.destroy();
  });

  it("never runs more than the plan allows across both, and starts each queued run exactly once", async () => {
    const key = await a.newAccount("shared-store", "two");
    await a.deploy("stamped", STAMPED, {}, key);
    const answers = await Promise.all(
      Array.from({ length: 16 }, (_, i) => (i % 2 === 0 ? a : b).call("POST", "/functions/stamped", { token: key, body: { ms: 300 }, headers: { prefer: "respond-async" } })),
    );
    for (const answer of answers) expect(answer.status).toBe(202);
    const runs = await Promise.all(answers.map((answer) => finished(a, key, String(answer.body.run_id))));
    expect(runs.map((run) => run.status)).toEqual(Array(16).fill("succeeded"));
    expect(peakOverlap(runs.map((run) => ({ from: run.result.entered, to: run.result.left })))).toBeLessThanOrEqual(2);
    // Exactly once: sixteen runs ended, sixteen invocations counted, and each run's one start is its record's.
    const logs = (await a.call("GET", "/functions/stamped/logs?limit=100", { token: key })).body.items;
    expect(logs).toHaveLength(16);
    for (const run of runs) expect(Date.parse(run.started_at)).toBeLessThanOrEqual(run.result.entered);
    const usage = (await a.call("GET", "/usage", { token: key })).body;
    expect(usage.remaining.invocations).toBe(10_000 - 16);
  }, 90_000);
});
