import { copyRun } from "../../lambdas/runs/copyRun";
import { deliveryIdOf } from "../../lambdas/webhooks/webhookTypes";
import { NO_PARAMS_FN } from "../helpers/code";
import { openEventStream } from "../helpers/eventStream";
import { cpuMsBetween, treeCpuMs } from "../helpers/processes";
import { startTestService, type TestService } from "../helpers/localService";
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from "../helpers/webhookReceiver";

/**
 * Issue 26, item 2: one tenant's poisoned runs must not stop another tenant's webhooks, nor make
 * the idle service spin, nor break its own run's record. Retries are fast here (20 ms base);
 * due deliveries are looked for at the default pace (every second, and at each run's end).
 */
const CONFIG = { webhooks: { retryBaseMs: 20 } };
const DEEP = 100_000;
/** The share of one core an idle service stays under (the spin the attack caused used more than one core). */
const IDLE_SHARE = 0.2;

/** A run that forges its own `done` with a valid 200 KB result nested 100,000 deep, as the attack did. */
const FORGER_FN = `import { artifacts } from "browserfn/runtime";
export default async () => {
  const saved = await artifacts.save("probe.txt", "x");
  const runId = saved.url.split("/runs/")[1].split("/")[0];
  const deep = "[".repeat(${DEEP}) + "]".repeat(${DEEP});
  if (typeof process.send === "function") {
    process.send({ type: "done", runId, outcome: { status: "succeeded", result_json: deep, logs: "", browser_ms: 0 } });
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  // Where the channel is out of reach: the same depth, returned.
  let value = [];
  for (let i = 1; i < ${DEEP}; i++) value = [value];
  return value;
};
`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The share of one core the service used over `ms` of idle time: this process (the service and
 * its dispatcher) and its children (the store's dynalite process; idle workers are frozen). The
 * lowest of up to three windows, so that the tail of the runs' own clean-up (a replaced worker,
 * the collector) on a machine busy with other suites is not read as a spin; a dispatcher that
 * retries hot uses a core or more in every window.
 */
async function idleCpuShare(ms: number): Promise<number> {
  let lowest = Infinity;
  for (let window = 0; window < 3 && lowest >= IDLE_SHARE; window++) {
    const before = treeCpuMs(process.pid);
    const started = performance.now();
    await sleep(ms);
    lowest = Math.min(lowest, cpuMsBetween(before, treeCpuMs(process.pid)) / (performance.now() - started));
  }
  return lowest;
}

/** The first request about a run of the function `name` (as its body says), waiting up to `timeoutMs`; it throws when none came. */
async function requestFor(receiver: WebhookReceiver, name: string, timeoutMs: number): Promise<ReceivedWebhook & { afterMs: number }> {
  const started = Date.now();
  for (;;) {
    const found = receiver.received.find((request) => functionNameOf(request) === name);
    if (found) return { ...found, afterMs: Date.now() - started };
    if (Date.now() - started > timeoutMs) throw new Error(`no webhook for ${name} within ${timeoutMs} ms (${receiver.received.length} received)`);
    await sleep(20);
  }
}

function functionNameOf(request: ReceivedWebhook): string {
  try {
    return String((JSON.parse(request.body) as { data: { run: { function_name: string } } }).data.run.function_name);
  } catch {
    return "";
  }
}

async function deliveries(t: TestService, ref: string, token: string) {
  const answer = await t.call("GET", `/functions/${ref}/deliveries`, { token });
  expect(answer.status).toBe(200);
  return answer.body.items as Record<string, unknown>[];
}

describe("a poisoned run's webhooks (issue 26, item 2)", () => {
  let receiver: WebhookReceiver;
  let t: TestService;
  let mallory: string;
  let bob: string;

  beforeEach(async () => {
    receiver = await startWebhookReceiver();
    t = await startTestService({ config: CONFIG });
    mallory = await t.newAccount("mallory");
    bob = await t.newAccount("bob");
    await t.deploy("plain", NO_PARAMS_FN, { webhooks: [{ url: receiver.url }] }, bob);
  });
  afterEach(async () => {
    await t?.destroy();
    await receiver.close();
  });

  it("fails a run that forges a 100,000-deep result (result_too_deep); another account's webhook still goes out at once, and the service idles", async () => {
    await t.deploy("poison", FORGER_FN, { webhooks: [{ url: receiver.url }], timeout_seconds: 60 }, mallory);
    const runIds: string[] = [];
    for (let i = 0; i < 3; i++) {
      const answer = await t.call("POST", "/functions/poison", { token: mallory });
      expect([answer.status, answer.body.error?.code]).toEqual([500, "result_too_deep"]);
      runIds.push(String(answer.headers.get("x-run-id")));
    }
    for (const runId of runIds) {
      const run = await t.call("GET", `/runs/${runId}`, { token: mallory });
      expect(run.status).toBe(200);
      expect(run.body).toMatchObject({ status: "failed", result: null, error: { code: "result_too_deep" } });
    }

    const invoked = await t.call("POST", "/functions/plain", { token: bob });
    expect(invoked.status).toBe(200);
    const bobs = await requestFor(receiver, "plain", 5_000);
    expect(bobs.afterMs).toBeLessThan(3_000);
    // Mallory's own ends were sent too (run.failed, result_too_deep), each once.
    for (const runId of runIds) {
      const sent = receiver.received.filter((request) => request.headers["webhook-id"] === deliveryIdOf(runId, 0));
      expect(sent).toHaveLength(1);
      expect(JSON.parse(String(sent[0]?.body))).toMatchObject({ type: "run.failed", data: { run: { error: { code: "result_too_deep" } } } });
    }
    for (let i = 0; i < 100 && (await deliveries(t, "poison", mallory)).some((item) => item.status !== "delivered"); i++) await sleep(50);
    expect((await deliveries(t, "poison", mallory)).map((item) => item.status)).toEqual(["delivered", "delivered", "delivered"]);
    expect(await idleCpuShare(2_000)).toBeLessThan(IDLE_SHARE);
  }, 120_000);

  it("serves and delivers a deep result recorded before the cap, after a restart: GET 200, its events, its webhook recorded; another account's goes out at once", async () => {
    await t.deploy("poison", NO_PARAMS_FN, { webhooks: [{ url: receiver.url }] }, mallory);
    const first = await t.call("POST", "/functions/poison", { token: mallory, headers: { prefer: "respond-async" } });
    const realId = String(first.body.run_id);
    await requestFor(receiver, "poison", 20_000);
    // The record an earlier version kept: a run that succeeded with 200 KB of JSON nested 100,000 deep, owing its webhook.
    const store = t.service.deps.store;
    const real = await store.runs.get(realId);
    if (!real) throw new Error("no run");
    const poisoned = { ...copyRun(real), run_id: `${realId.slice(0, -4)}zzzz`, status: "running" as const };
    await store.runs.put(poisoned);
    const pending = [{ delivery_id: deliveryIdOf(poisoned.run_id, 0), url: receiver.url, event: "run.succeeded" as const }];
    const deep = "[".repeat(DEEP) + "]".repeat(DEEP);
    expect(await store.runs.putIfActive({ ...poisoned, status: "succeeded", result_json: deep }, pending)).toBe(true);
    await t.stop();
    t = await startTestService({ dataDir: t.dataDir, adminKey: t.adminKey, config: CONFIG });

    const sent = await (async () => {
      for (let i = 0; i < 250; i++) {
        const found = receiver.received.find((request) => request.headers["webhook-id"] === pending[0]?.delivery_id);
        if (found) return found;
        await sleep(20);
      }
      throw new Error("the poisoned run's webhook was never sent");
    })();
    // Shown as the cap would have ended it: failed, result_too_deep, no result.
    expect(JSON.parse(sent.body).data.run).toMatchObject({ run_id: poisoned.run_id, status: "failed", result: null, error: { code: "result_too_deep" } });

    const before = receiver.received.length;
    expect((await t.call("POST", "/functions/plain", { token: bob })).status).toBe(200);
    const bobs = await requestFor(receiver, "plain", 5_000);
    expect(bobs.afterMs).toBeLessThan(3_000);
    expect(receiver.received.length).toBeGreaterThan(before);

    const shown = await t.call("GET", `/runs/${poisoned.run_id}`, { token: mallory });
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({ status: "failed", result: null, error: { code: "result_too_deep", message: expect.stringContaining("64 levels") } });
    const stream = await openEventStream(t.url, `/runs/${poisoned.run_id}/events`, { token: mallory });
    expect(stream.status).toBe(200);
    await stream.ended;
    expect(stream.events.at(-1)).toMatchObject({ event: "error", json: { error: { code: "result_too_deep" } } });
    const items = await deliveries(t, "poison", mallory);
    expect(items.find((item) => item.delivery_id === pending[0]?.delivery_id)).toMatchObject({ status: "delivered", attempts: 1 });
    expect(await idleCpuShare(2_000)).toBeLessThan(IDLE_SHARE);
  }, 120_000);

  it("is fair between accounts: one account's many slow deliveries do not hold back another's", async () => {
    const slow = await startWebhookReceiver();
    slow.hang = true;
    try {
      // Five webhooks on a receiver that never answers (each attempt waits out the 10 s timeout), three runs: fifteen due at once.
      await t.deploy("flood", NO_PARAMS_FN, { webhooks: Array.from({ length: 5 }, (_, i) => ({ url: `${slow.url}/${i}` })) }, mallory);
      for (let i = 0; i < 3; i++) expect((await t.call("POST", "/functions/flood", { token: mallory })).status).toBe(200);
      await slow.waitFor(2, 10_000);
      await sleep(300);
      expect((await t.call("POST", "/functions/plain", { token: bob })).status).toBe(200);
      const bobs = await requestFor(receiver, "plain", 8_000);
      expect(bobs.afterMs).toBeLessThan(2_000);
      // Mallory's are still waiting on the slow receiver, at most two at a time.
      expect(slow.received.length).toBeLessThanOrEqual(2);
    } finally {
      // Its hanging requests end (connection reset); the service is stopped after the test.
      await slow.close();
    }
  }, 120_000);

  it("keeps an account's webhooks going while another of its receivers never answers: only the deliveries to that one wait", async () => {
    const slow = await startWebhookReceiver();
    slow.hang = true;
    try {
      // Each run owes one delivery to the receiver that never answers (each attempt waits out the
      // 10 s timeout) and one to a receiver that answers at once, due in that order.
      await t.deploy("split", NO_PARAMS_FN, { webhooks: [{ url: slow.url }, { url: receiver.url }] }, mallory);
      const runIds: string[] = [];
      for (let i = 0; i < 5; i++) {
        const answer = await t.call("POST", "/functions/split", { token: mallory });
        expect(answer.status).toBe(200);
        runIds.push(String(answer.headers.get("x-run-id")));
      }
      const started = Date.now();
      // Every run's delivery to the answering receiver, well within the first attempts' timeout.
      await receiver.waitFor(runIds.length, 8_000);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(receiver.received.map((request) => request.headers["webhook-id"]).sort()).toEqual(runIds.map((runId) => deliveryIdOf(runId, 1)).sort());
      // The receiver that never answers holds its own share only: two attempts at a time.
      expect(slow.received.length).toBeLessThanOrEqual(2);
    } finally {
      await slow.close();
    }
  }, 120_000);
});
