import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ChangeMessageVisibilityCommand, SendMessageBatchCommand } from "@aws-sdk/client-sqs";
import type { SQSEvent } from "aws-lambda";
import { finishRun } from "../../lambdas/runs/finishRun";
import { webhookSecretContext } from "../../lambdas/secrets/secretContexts";
import { createLocalSecretBox } from "../../lambdas/secrets/localSecretBox";
import type { SecretBox } from "../../lambdas/secrets/secretBox";
import { makeDeliveryConsumer } from "../../lambdas/webhooks/aws/deliveryConsumer";
import { createSqsDeliveryQueue } from "../../lambdas/webhooks/aws/sqsDeliveryQueue";
import { createWebhookOutbox } from "../../lambdas/webhooks/webhookOutbox";
import { deliveryIdOf } from "../../lambdas/webhooks/webhookTypes";
import { FakeClock } from "../helpers/fakeClock";
import { type MemoryStore, startMemoryStore } from "../helpers/memoryStore";
import { functionItem, runItem } from "../helpers/records";
import { startWebhookReceiver, verifyStandardWebhook, type WebhookReceiver } from "../helpers/webhookReceiver";

const QUEUE_URL = "https://sqs.eu-west-1.amazonaws.com/123456789012/bfn-webhooks";
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const RUN_ID = `run_${"0".repeat(25)}1`;

/** An SQS client stand-in: records every command, answers what the test says. */
function fakeSqs(answer: (command: unknown) => unknown = () => ({})) {
  const commands: unknown[] = [];
  return {
    commands,
    send: jest.fn(async (command: unknown) => {
      commands.push(command);
      return answer(command);
    }),
  };
}

const sqsEvent = (records: { messageId: string; receiptHandle: string; body: string }[]) => ({ Records: records }) as unknown as SQSEvent;

describe("webhook deliveries on AWS (SQS)", () => {
  let memory: MemoryStore;
  let receiver: WebhookReceiver;
  let secretBox: SecretBox;
  let dir: string;
  const clock = new FakeClock("2026-01-01T00:00:10.000Z");
  const logs: string[] = [];
  const fn = functionItem({ webhooks: [] });

  beforeAll(async () => {
    memory = await startMemoryStore();
    receiver = await startWebhookReceiver();
    dir = await mkdtemp(path.join(tmpdir(), "browserfn-webhook-aws-"));
    secretBox = await createLocalSecretBox(dir);
    const sealed = await secretBox.seal(SECRET, webhookSecretContext(fn.function_id));
    await memory.store.functions.create({ ...fn, webhooks: [{ url: receiver.url, events: ["run.succeeded"] }], webhook_secret_sealed: sealed });
  });
  afterAll(async () => {
    await memory.close();
    await receiver.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("queues the deliveries of a run's end: one message each, then the outbox entry on the run is gone", async () => {
    const failing = fakeSqs(() => Promise.reject(new Error("SQS is away")));
    const down = createWebhookOutbox({ store: memory.store, queue: createSqsDeliveryQueue(failing, QUEUE_URL), clock, log: (line) => logs.push(line) });
    await memory.store.runs.put(runItem(fn, { run_id: RUN_ID }));
    const result = { status: "succeeded" as const, result_json: '{"n":1}', error: null, logs: "", duration_ms: 5, browser_ms: 0, peak_memory_mb: null };
    const ended = await finishRun({ store: memory.store, clock, log: (line) => logs.push(line), webhooks: down }, runItem(fn, { run_id: RUN_ID }), result, "now");
    expect(ended.status).toBe("succeeded");
    const message = JSON.stringify({ function_id: fn.function_id, delivery_id: deliveryIdOf(RUN_ID, 0) });
    expect(failing.commands.map((command) => (command as SendMessageBatchCommand).input)).toEqual([{ QueueUrl: QUEUE_URL, Entries: [{ Id: "0", MessageBody: message, MessageGroupId: "acct" }] }]);
    expect(logs.some((line) => line.includes("not queued yet"))).toBe(true);
    // The end stays in the outbox: the sweeper queues it later.
    const later = new Date(clock.now().getTime() + 60_000);
    expect(await memory.store.runs.listPendingDeliveries(later, 10)).toEqual([
      { run_id: RUN_ID, account_id: fn.account_id, function_id: fn.function_id, pending: [{ delivery_id: deliveryIdOf(RUN_ID, 0), url: receiver.url, event: "run.succeeded" }] },
    ]);

    const sqs = fakeSqs(() => ({ Successful: [{ Id: "0" }], Failed: [] }));
    const outbox = createWebhookOutbox({ store: memory.store, queue: createSqsDeliveryQueue(sqs, QUEUE_URL), clock, log: (line) => logs.push(line) });
    expect(await outbox.reconcile(0)).toBe(1);
    expect(sqs.send).toHaveBeenCalledTimes(1);
    expect(sqs.commands[0]).toBeInstanceOf(SendMessageBatchCommand);
    expect((sqs.commands[0] as SendMessageBatchCommand).input).toEqual({ QueueUrl: QUEUE_URL, Entries: [{ Id: "0", MessageBody: message, MessageGroupId: "acct" }] });
    expect(await memory.store.runs.listPendingDeliveries(later, 10)).toEqual([]);
    expect(await outbox.reconcile(0)).toBe(0);
  });

  it("attempts a due delivery; a failed attempt hides its message until the next is due, and a 2xx ends it", async () => {
    const sqs = fakeSqs();
    const consume = makeDeliveryConsumer({
      store: memory.store,
      secretBox,
      sqs,
      queueUrl: QUEUE_URL,
      clock,
      log: (line) => logs.push(line),
      allowLocalNetwork: true,
      retryBaseMs: 5_000,
    });
    const body = JSON.stringify({ function_id: fn.function_id, delivery_id: deliveryIdOf(RUN_ID, 0) });
    receiver.answers.push(500);
    expect(await consume(sqsEvent([{ messageId: "m1", receiptHandle: "rh-1", body }]))).toEqual({ batchItemFailures: [{ itemIdentifier: "m1" }] });
    expect(sqs.commands).toHaveLength(1);
    expect(sqs.commands[0]).toBeInstanceOf(ChangeMessageVisibilityCommand);
    expect((sqs.commands[0] as ChangeMessageVisibilityCommand).input).toEqual({ QueueUrl: QUEUE_URL, ReceiptHandle: "rh-1", VisibilityTimeout: 5 });
    expect(await memory.store.deliveries.get(fn.function_id, deliveryIdOf(RUN_ID, 0))).toMatchObject({ status: "pending", attempts: 1, last_status_code: 500 });

    // Back early (a duplicate message): not attempted, hidden for what is left.
    await clock.advanceTo("2026-01-01T00:00:12.000Z");
    expect(await consume(sqsEvent([{ messageId: "m2", receiptHandle: "rh-2", body }]))).toEqual({ batchItemFailures: [{ itemIdentifier: "m2" }] });
    expect((sqs.commands[1] as ChangeMessageVisibilityCommand).input).toEqual({ QueueUrl: QUEUE_URL, ReceiptHandle: "rh-2", VisibilityTimeout: 3 });
    expect(receiver.received).toHaveLength(1);

    await clock.advanceTo("2026-01-01T00:00:15.000Z");
    expect(await consume(sqsEvent([{ messageId: "m1", receiptHandle: "rh-3", body }]))).toEqual({ batchItemFailures: [] });
    expect(sqs.commands).toHaveLength(2);
    const [first, second] = receiver.received;
    expect(second?.headers["webhook-id"]).toBe(first?.headers["webhook-id"]);
    expect(second && verifyStandardWebhook(SECRET, second)).toBe(true);
    expect(JSON.parse(String(second?.body)).data.run).toMatchObject({ run_id: RUN_ID, status: "succeeded", result: { n: 1 } });
    expect(await memory.store.deliveries.get(fn.function_id, deliveryIdOf(RUN_ID, 0))).toMatchObject({ status: "delivered", attempts: 2, last_status_code: 200, next_attempt_at: null });

    // Done with: a message of a delivered delivery, and one that names none, are dropped.
    const done = await consume(sqsEvent([
      { messageId: "m3", receiptHandle: "rh-4", body },
      { messageId: "m4", receiptHandle: "rh-5", body: '{"function_id":"x"}' },
    ]));
    expect(done).toEqual({ batchItemFailures: [] });
    expect(sqs.commands).toHaveLength(2);
    expect(receiver.received).toHaveLength(2);
  });

  it("never reaches loopback from AWS: the attempt is refused and recorded, the message hidden for the retry", async () => {
    const runId = `run_${"0".repeat(25)}2`;
    await memory.store.runs.put(runItem(fn, { run_id: runId }));
    const outbox = createWebhookOutbox({ store: memory.store, queue: createSqsDeliveryQueue(fakeSqs(() => ({})), QUEUE_URL), clock, log: () => undefined });
    const result = { status: "succeeded" as const, result_json: "1", error: null, logs: "", duration_ms: 5, browser_ms: 0, peak_memory_mb: null };
    await finishRun({ store: memory.store, clock, log: () => undefined, webhooks: outbox }, runItem(fn, { run_id: runId }), result, "now");
    const sqs = fakeSqs();
    const consume = makeDeliveryConsumer({ store: memory.store, secretBox, sqs, queueUrl: QUEUE_URL, clock, log: () => undefined, allowLocalNetwork: false, retryBaseMs: 5_000 });
    const body = JSON.stringify({ function_id: fn.function_id, delivery_id: deliveryIdOf(runId, 0) });
    const seen = receiver.received.length;
    expect(await consume(sqsEvent([{ messageId: "m5", receiptHandle: "rh-6", body }]))).toEqual({ batchItemFailures: [{ itemIdentifier: "m5" }] });
    expect((sqs.commands[0] as ChangeMessageVisibilityCommand).input).toEqual({ QueueUrl: QUEUE_URL, ReceiptHandle: "rh-6", VisibilityTimeout: 5 });
    expect(receiver.received).toHaveLength(seen);
    const delivery = await memory.store.deliveries.get(fn.function_id, deliveryIdOf(runId, 0));
    expect(delivery).toMatchObject({ status: "pending", attempts: 1, last_status_code: null });
    expect(delivery?.last_error).toMatch(/^refused: 127\.0\.0\.1/);
  });

  it("fails at once, with why, a delivery whose body cannot be built: the message is done with, never retried", async () => {
    const runId = `run_${"0".repeat(25)}3`;
    await memory.store.runs.put(runItem(fn, { run_id: runId }));
    const outbox = createWebhookOutbox({ store: memory.store, queue: createSqsDeliveryQueue(fakeSqs(() => ({})), QUEUE_URL), clock, log: () => undefined });
    const result = { status: "succeeded" as const, result_json: "1", error: null, logs: "", duration_ms: 5, browser_ms: 0, peak_memory_mb: null };
    await finishRun({ store: memory.store, clock, log: () => undefined, webhooks: outbox }, runItem(fn, { run_id: runId }), result, "now");
    // A run as no version writes it (parameters are checked to 30 levels): JSON.stringify overflows on it.
    let params: unknown = 1;
    for (let i = 0; i < 100_000; i++) params = { p: params };
    const stored = await memory.store.runs.get(runId);
    if (!stored) throw new Error("no run");
    const runs = { get: async (id: string) => (id === runId ? { ...stored, params: params as Record<string, unknown> } : memory.store.runs.get(id)) };
    // Recorded by an earlier version: no body was kept at its end, so the attempt builds one from the record.
    const deliveries = Object.assign(Object.create(memory.store.deliveries) as typeof memory.store.deliveries, {
      getBody: async (id: string) => (id === runId ? undefined : memory.store.deliveries.getBody(id)),
    });
    const store = { functions: memory.store.functions, deliveries, runs: runs as unknown as typeof memory.store.runs };
    const sqs = fakeSqs();
    const lines: string[] = [];
    const consume = makeDeliveryConsumer({ store, secretBox, sqs, queueUrl: QUEUE_URL, clock, log: (line) => lines.push(line), allowLocalNetwork: true, retryBaseMs: 5_000 });
    const body = JSON.stringify({ function_id: fn.function_id, delivery_id: deliveryIdOf(runId, 0) });
    const seen = receiver.received.length;
    expect(await consume(sqsEvent([{ messageId: "m6", receiptHandle: "rh-7", body }]))).toEqual({ batchItemFailures: [] });
    expect(sqs.commands).toEqual([]);
    expect(receiver.received).toHaveLength(seen);
    expect(await memory.store.deliveries.get(fn.function_id, deliveryIdOf(runId, 0))).toMatchObject({
      status: "failed",
      attempts: 0,
      next_attempt_at: null,
      last_error: expect.stringMatching(/^its body could not be built \(Maximum call stack size exceeded\)/),
    });
    expect(lines.some((line) => line.includes(deliveryIdOf(runId, 0)) && line.endsWith("failed"))).toBe(true);
  });

  it("delivers the end of a run recorded with a result nested past the cap as failed, result_too_deep", async () => {
    const runId = `run_${"0".repeat(25)}4`;
    await memory.store.runs.put(runItem(fn, { run_id: runId }));
    const outbox = createWebhookOutbox({ store: memory.store, queue: createSqsDeliveryQueue(fakeSqs(() => ({})), QUEUE_URL), clock, log: () => undefined });
    const deep = "[".repeat(100_000) + "]".repeat(100_000);
    const result = { status: "succeeded" as const, result_json: deep, error: null, logs: "", duration_ms: 5, browser_ms: 0, peak_memory_mb: null };
    await finishRun({ store: memory.store, clock, log: () => undefined, webhooks: outbox }, runItem(fn, { run_id: runId }), result, "now");
    const sqs = fakeSqs();
    const consume = makeDeliveryConsumer({ store: memory.store, secretBox, sqs, queueUrl: QUEUE_URL, clock, log: () => undefined, allowLocalNetwork: true, retryBaseMs: 5_000 });
    const body = JSON.stringify({ function_id: fn.function_id, delivery_id: deliveryIdOf(runId, 0) });
    expect(await consume(sqsEvent([{ messageId: "m7", receiptHandle: "rh-8", body }]))).toEqual({ batchItemFailures: [] });
    const sent = receiver.received.at(-1);
    expect(sent?.headers["webhook-id"]).toBe(deliveryIdOf(runId, 0));
    expect(JSON.parse(String(sent?.body)).data.run).toMatchObject({ run_id: runId, status: "failed", result: null, error: { code: "result_too_deep" } });
    expect(await memory.store.deliveries.get(fn.function_id, deliveryIdOf(runId, 0))).toMatchObject({ status: "delivered", attempts: 1 });
  });
});
