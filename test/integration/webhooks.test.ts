import { copyRun } from "../../lambdas/runs/copyRun";
import { deliveryIdOf } from "../../lambdas/webhooks/webhookTypes";
import { NO_PARAMS_FN } from "../helpers/code";
import { expectError } from "../helpers/http";
import { startTestService, type TestService } from "../helpers/localService";
import { startWebhookReceiver, verifyStandardWebhook, type WebhookReceiver } from "../helpers/webhookReceiver";

const FAILING_FN = `export default async () => { throw new Error("boom"); };\n`;
/** Retries after 20 ms, 1.2 s, …; due deliveries looked for every 50 ms. */
const FAST = { webhooks: { retryBaseMs: 20, pollMs: 50 } };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function deliveries(t: TestService, ref: string, token?: string) {
  const answer = await t.call("GET", `/functions/${ref}/deliveries`, { token });
  expect(answer.status).toBe(200);
  return answer.body.items as Record<string, unknown>[];
}

async function waitForDelivery(t: TestService, ref: string, done: (item: Record<string, unknown>) => boolean) {
  for (let i = 0; i < 200; i++) {
    const items = await deliveries(t, ref);
    if (items.some(done)) return items;
    await sleep(50);
  }
  throw new Error(`no delivery of ${ref} came to the expected state: ${JSON.stringify(await deliveries(t, ref))}`);
}

describe("webhooks", () => {
  let t: TestService;
  let receiver: WebhookReceiver;

  beforeEach(async () => {
    receiver = await startWebhookReceiver();
    t = await startTestService({ config: FAST });
  });
  afterEach(async () => {
    await t.destroy();
    await receiver.close();
  });

  it("POSTs a run's end signed the Standard Webhooks way, with the run as GET /runs/{id} shows it", async () => {
    const created = await t.deploy("hooked", NO_PARAMS_FN, {
      webhooks: [{ url: receiver.url }, { url: `${receiver.url}?only=failed`, events: ["run.failed"] }],
    });
    expect(created.webhook_secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(created.webhook_secret.slice(6), "base64")).toHaveLength(32);
    expect(created.webhooks).toEqual([
      { url: receiver.url, events: ["run.succeeded", "run.failed", "run.timed_out", "run.canceled"] },
      { url: `${receiver.url}?only=failed`, events: ["run.failed"] },
    ]);
    const info = await t.call("GET", "/functions/hooked/info");
    expect(info.body.webhooks).toEqual(created.webhooks);
    expect(info.body).not.toHaveProperty("webhook_secret");

    const invoked = await t.call("POST", "/functions/hooked");
    expect(invoked.status).toBe(200);
    const runId = invoked.headers.get("x-run-id");
    const [request] = await receiver.waitFor(1);
    if (!request) throw new Error("no request");
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.headers["webhook-id"]).toBe(deliveryIdOf(String(runId), 0));
    expect(Math.abs(Number(request.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(60);
    expect(verifyStandardWebhook(created.webhook_secret, request)).toBe(true);
    expect(verifyStandardWebhook(created.webhook_secret, { ...request, body: request.body.replace("succeeded", "failed") })).toBe(false);
    const body = JSON.parse(request.body);
    const run = await t.call("GET", `/runs/${runId}`);
    expect(body).toEqual({ type: "run.succeeded", timestamp: run.body.finished_at, data: { run: run.body } });
    expect(body.data.run.result).toEqual({ ok: true });

    const items = await waitForDelivery(t, "hooked", (item) => item.status === "delivered");
    expect(items).toEqual([
      {
        delivery_id: deliveryIdOf(String(runId), 0),
        event: "run.succeeded",
        run_id: runId,
        url: receiver.url,
        attempts: 1,
        status: "delivered",
        last_status_code: 200,
        last_error: null,
        next_attempt_at: null,
        created_at: expect.any(String),
      },
    ]);
    // The run.failed-only webhook got nothing.
    await sleep(200);
    expect(receiver.received).toHaveLength(1);
  });

  it("sends run.failed to the webhooks subscribed to it", async () => {
    const created = await t.deploy("breaks", FAILING_FN, { webhooks: [{ url: receiver.url, events: ["run.failed"] }] });
    expect((await t.call("POST", "/functions/breaks")).status).toBe(500);
    const [request] = await receiver.waitFor(1);
    if (!request) throw new Error("no request");
    expect(verifyStandardWebhook(created.webhook_secret, request)).toBe(true);
    const body = JSON.parse(request.body);
    expect(body.type).toBe("run.failed");
    expect(body.data.run).toMatchObject({ status: "failed", error: { code: "function_error", message: expect.stringContaining("boom") } });
  });

  it("retries a delivery that got a 500 under the same webhook-id, and records the attempts", async () => {
    receiver.answers.push(500);
    const created = await t.deploy("retried", NO_PARAMS_FN, { webhooks: [{ url: receiver.url }] });
    await t.call("POST", "/functions/retried");
    const [first, second] = await receiver.waitFor(2);
    if (!first || !second) throw new Error("no requests");
    expect(first.answered).toBe(500);
    expect(second.answered).toBe(200);
    expect(second.headers["webhook-id"]).toBe(first.headers["webhook-id"]);
    expect(second.body).toBe(first.body);
    expect(verifyStandardWebhook(created.webhook_secret, second)).toBe(true);
    const [item] = await waitForDelivery(t, "retried", (delivery) => delivery.status === "delivered");
    expect(item).toMatchObject({ attempts: 2, status: "delivered", last_status_code: 200, next_attempt_at: null });
  });

  it("keeps a failed attempt's status and next attempt while the receiver keeps failing", async () => {
    receiver.fallback = 503;
    await t.deploy("failing", NO_PARAMS_FN, { webhooks: [{ url: receiver.url }] });
    await t.call("POST", "/functions/failing");
    const [item] = await waitForDelivery(t, "failing", (delivery) => delivery.attempts === 2);
    expect(item).toMatchObject({ status: "pending", last_status_code: 503, last_error: "answered HTTP 503", next_attempt_at: expect.any(String) });
    // The third attempt is 60 base delays (1.2 s) after the second.
    expect(Date.parse(String(item?.next_attempt_at)) - Date.now()).toBeGreaterThan(500);
  });

  it("rotates the signing secret: the new one signs, the old one no longer verifies", async () => {
    const created = await t.deploy("rotating", NO_PARAMS_FN, { webhooks: [{ url: receiver.url }] });
    const rotated = await t.call("POST", "/functions/rotating/webhook-secret");
    expect(rotated.status).toBe(200);
    expect(Object.keys(rotated.body)).toEqual(["webhook_secret"]);
    expect(rotated.body.webhook_secret).toMatch(/^whsec_/);
    expect(rotated.body.webhook_secret).not.toBe(created.webhook_secret);
    await t.call("POST", "/functions/rotating");
    const [request] = await receiver.waitFor(1);
    if (!request) throw new Error("no request");
    expect(verifyStandardWebhook(rotated.body.webhook_secret, request)).toBe(true);
    expect(verifyStandardWebhook(created.webhook_secret, request)).toBe(false);
    // Neither secret is ever shown again, nor kept in plain text.
    const info = await t.call("GET", "/functions/rotating/info");
    expect(info.text).not.toContain("whsec_");
    const stored = await t.service.deps.store.functions.getByName("local", "rotating");
    expect(stored?.webhook_secret_sealed).toEqual(expect.any(String));
    expect(stored?.webhook_secret_sealed).not.toContain(rotated.body.webhook_secret.slice(6, 20));
  });

  it("shows the secret once: when PATCH sets the first webhooks, and not on later changes", async () => {
    await t.deploy("later", NO_PARAMS_FN);
    expect((await t.call("GET", "/functions/later/info")).body.webhooks).toEqual([]);
    const first = await t.call("PATCH", "/functions/later", { body: { webhooks: [{ url: receiver.url, events: ["run.timed_out", "run.succeeded", "run.succeeded"] }] } });
    expect(first.status).toBe(200);
    expect(first.body.webhook_secret).toMatch(/^whsec_/);
    expect(first.body.webhooks).toEqual([{ url: receiver.url, events: ["run.succeeded", "run.timed_out"] }]);
    const second = await t.call("PATCH", "/functions/later", { body: { webhooks: [{ url: `${receiver.url}/2` }] } });
    expect(second.body).not.toHaveProperty("webhook_secret");
    const removed = await t.call("PATCH", "/functions/later", { body: { webhooks: [] } });
    expect(removed.body.webhooks).toEqual([]);
    await t.call("POST", "/functions/later");
    await sleep(300);
    expect(receiver.received).toHaveLength(0);
    expect(await deliveries(t, "later")).toEqual([]);
  });

  it("refuses bad webhooks with 400 and the issues", async () => {
    const bad: [unknown, string][] = [
      [[{ url: "ftp://example.com/x" }], "webhooks.0.url"],
      [[{ url: "/relative" }], "webhooks.0.url"],
      [[{ url: "https://user:pw@example.com/" }], "webhooks.0.url"],
      [[{ url: `https://example.com/${"a".repeat(2100)}` }], "webhooks.0.url"],
      [[{ url: "https://example.com/", events: [] }], "webhooks.0.events"],
      [[{ url: "https://example.com/", events: ["run.started"] }], "webhooks.0.events.0"],
      [[{ url: "https://example.com/", extra: 1 }], "webhooks.0"],
      [Array.from({ length: 6 }, () => ({ url: "https://example.com/" })), "webhooks"],
      ["https://example.com/", "webhooks"],
    ];
    for (const [webhooks, field] of bad) {
      const answer = await t.call("POST", "/functions", { body: { name: "bad", code: NO_PARAMS_FN, webhooks } });
      const error = expectError(answer, 400, "invalid_request");
      expect(error.details.issues).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    }
    expect((await t.call("GET", "/functions/bad/info")).status).toBe(404);
  });

  it("keeps deliveries and the secret to the function's account; a fork copies no webhooks", async () => {
    const other = await t.newAccount("other");
    const created = await t.deploy("mine", NO_PARAMS_FN, { shared: true, webhooks: [{ url: receiver.url }] });
    expectError(await t.call("GET", "/functions/mine/deliveries", { token: other }), 404, "function_not_found");
    expectError(await t.call("GET", `/functions/${created.function_id}/deliveries`, { token: other }), 404, "function_not_found");
    expectError(await t.call("POST", `/functions/${created.function_id}/webhook-secret`, { token: other }), 404, "function_not_found");
    const shown = await t.call("GET", `/functions/${created.function_id}/info`, { token: other });
    expect(shown.body.webhooks).toEqual([]);
    const fork = await t.call("POST", `/functions/${created.function_id}/fork`, { token: other, body: {} });
    expect(fork.status).toBe(201);
    expect(fork.body.webhooks).toEqual([]);
    expect(fork.body).not.toHaveProperty("webhook_secret");
    const forked = await t.service.deps.store.functions.getById(fork.body.function_id);
    expect(forked?.webhook_secret_sealed ?? null).toBeNull();
    expect((await t.call("POST", `/functions/${fork.body.function_id}`, { token: other })).status).toBe(200);
    await sleep(300);
    expect(receiver.received).toHaveLength(0);
    expectError(await t.call("GET", "/functions/mine/deliveries?limit=0"), 400, "invalid_limit");
  });

  it("stops a deleted function's pending deliveries", async () => {
    receiver.fallback = 500;
    await t.deploy("doomed", NO_PARAMS_FN, { webhooks: [{ url: receiver.url }] });
    const fn = await t.service.deps.store.functions.getByName("local", "doomed");
    await t.call("POST", "/functions/doomed");
    await receiver.waitFor(2);
    expect((await t.call("DELETE", "/functions/doomed")).status).toBe(204);
    const seen = receiver.received.length;
    for (let i = 0; i < 100; i++) {
      const [item] = await t.service.deps.store.deliveries.recent(fn?.function_id ?? "", 1);
      if (item?.status === "cancelled") break;
      await sleep(50);
    }
    const [item] = await t.service.deps.store.deliveries.recent(fn?.function_id ?? "", 1);
    expect(item).toMatchObject({ status: "cancelled", last_error: "the function was deleted", next_attempt_at: null });
    expect(receiver.received.length).toBeLessThanOrEqual(seen + 1);
  });
});

describe("the webhook outbox", () => {
  it("delivers an end whose deliveries were written with it but never queued (the process stopped in between)", async () => {
    const receiver = await startWebhookReceiver();
    const first = await startTestService({ config: FAST });
    let second: TestService | undefined;
    try {
      const created = await first.deploy("interrupted", NO_PARAMS_FN, { webhooks: [{ url: receiver.url }] });
      const invoked = await first.call("POST", "/functions/interrupted", { headers: { prefer: "respond-async" } });
      const runId = String(invoked.body.run_id);
      await receiver.waitFor(1);
      // The same end again, as a recorder that stopped right after its final write leaves it:
      // a run item that owes a delivery, and no delivery item.
      const store = first.service.deps.store;
      const run = await store.runs.get(runId);
      if (!run) throw new Error("no run");
      const lost = { ...copyRun(run), run_id: `${runId.slice(0, -4)}zzzz`, status: "running" as const };
      await store.runs.put(lost);
      const pending = [{ delivery_id: deliveryIdOf(lost.run_id, 0), url: receiver.url, event: "run.succeeded" as const }];
      expect(await store.runs.putIfActive({ ...lost, status: "succeeded" }, pending)).toBe(true);
      await first.stop();
      second = await startTestService({ dataDir: first.dataDir, adminKey: first.adminKey, config: FAST });
      const [, request] = await receiver.waitFor(2);
      if (!request) throw new Error("no request");
      expect(request.headers["webhook-id"]).toBe(pending[0]?.delivery_id);
      expect(verifyStandardWebhook(created.webhook_secret, request)).toBe(true);
      expect(JSON.parse(request.body).data.run.run_id).toBe(lost.run_id);
      expect(await second.service.deps.store.runs.listPendingDeliveries(new Date(Date.now() + 60_000), 10)).toEqual([]);
    } finally {
      await (second ?? first).destroy();
      await receiver.close();
    }
  });
});
