import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { systemClock } from "../../lambdas/deps";
import { finishRun } from "../../lambdas/runs/finishRun";
import { createLocalSecretBox } from "../../lambdas/secrets/localSecretBox";
import { webhookSecretContext } from "../../lambdas/secrets/secretContexts";
import { LocalWebhookDispatcher } from "../../lambdas/webhooks/localDispatcher";
import { createWebhookOutbox } from "../../lambdas/webhooks/webhookOutbox";
import { partitionOf } from "../../lambdas/store/deliveryStore";
import { deliveryIdOf } from "../../lambdas/webhooks/webhookTypes";
import { type MemoryStore, startMemoryStore } from "../helpers/memoryStore";
import { functionItem, runItem } from "../helpers/records";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhookReceiver";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/**
 * The local dispatcher on a real store (dynalite) and a real receiver: an attempt it cannot
 * record is held back, never retried at once; an account's marker in the due index goes once
 * nothing of it is pending.
 */
describe("the local webhook dispatcher", () => {
  let memory: MemoryStore;
  let receiver: WebhookReceiver;
  let dir: string;
  let dispatcher: LocalWebhookDispatcher | undefined;
  const lines: string[] = [];
  const fn = functionItem({ webhooks: [] });

  beforeEach(async () => {
    memory = await startMemoryStore();
    receiver = await startWebhookReceiver();
    dir = await mkdtemp(path.join(tmpdir(), "browserfn-dispatcher-"));
  });
  afterEach(async () => {
    await dispatcher?.close();
    await memory.close();
    await receiver.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** A dispatcher polling every 20 ms, over `store`, with the function's webhook on the receiver and one run's end queued. */
  async function start(store: MemoryStore["store"], runId: string) {
    const secretBox = await createLocalSecretBox(dir);
    const sealed = await secretBox.seal(SECRET, webhookSecretContext(fn.function_id));
    await memory.store.functions.create({ ...fn, webhooks: [{ url: receiver.url, events: ["run.succeeded"] }], webhook_secret_sealed: sealed });
    dispatcher = new LocalWebhookDispatcher(
      { store, secretBox, clock: systemClock, log: (line) => lines.push(line), allowLocalNetwork: true, retryBaseMs: 20 },
      { pollMs: 20 },
    );
    const outbox = createWebhookOutbox({ store, queue: dispatcher, clock: systemClock, log: (line) => lines.push(line) });
    dispatcher.start(outbox);
    const run = runItem(fn, { run_id: runId, queued_at: new Date().toISOString() });
    await store.runs.put(run);
    const result = { status: "succeeded" as const, result_json: "1", error: null, logs: "", duration_ms: 5, browser_ms: 0, peak_memory_mb: null };
    await finishRun({ store, clock: systemClock, log: () => undefined, webhooks: outbox }, run, result, "now");
  }

  it("holds back an attempt it could not record (1 s, then longer) instead of trying it again at once", async () => {
    const runId = `run_${"0".repeat(25)}1`;
    const deliveries = memory.store.deliveries;
    // The store refuses the write that records an attempt (an outage of that one write).
    const failing = Object.assign(Object.create(deliveries) as typeof deliveries, {
      update: async () => {
        throw new Error("the store refused the write");
      },
    });
    await start({ ...memory.store, deliveries: failing }, runId);
    await receiver.waitFor(1);
    await sleep(1_500);
    // The first attempt, then one after the 1 s hold; not one per poll (20 ms) or per wake-up.
    expect(receiver.received.length).toBeGreaterThanOrEqual(1);
    expect(receiver.received.length).toBeLessThanOrEqual(2);
    expect(lines.some((line) => line.includes(deliveryIdOf(runId, 0)) && line.includes("tried again in 1000 ms"))).toBe(true);
    expect(await deliveries.get(fn.function_id, deliveryIdOf(runId, 0))).toMatchObject({ status: "pending", attempts: 0 });
  });

  it("forgets an account in the due index once none of its deliveries is pending", async () => {
    const runId = `run_${"0".repeat(25)}2`;
    await start(memory.store, runId);
    await receiver.waitFor(1);
    for (let i = 0; i < 100 && (await memory.store.deliveries.dueAccounts(10)).length > 0; i++) await sleep(20);
    expect(await memory.store.deliveries.dueAccounts(10)).toEqual([]);
    expect(await memory.store.deliveries.get(fn.function_id, deliveryIdOf(runId, 0))).toMatchObject({ status: "delivered", attempts: 1 });
  });

  it("still sends a delivery an earlier version left due in the shared partition (gsi1pk WHDUE)", async () => {
    const runId = `run_${"0".repeat(25)}3`;
    await start(memory.store, runId);
    await receiver.waitFor(1);
    // The same end's second webhook, as the item an earlier version wrote: due in the one shared partition, no account marker.
    const legacyId = deliveryIdOf(runId, 1);
    const now = new Date().toISOString();
    await memory.doc.send(
      new PutCommand({
        TableName: memory.table,
        Item: {
          pk: `FNID#${fn.function_id}`, sk: `DLV#${legacyId}`, gsi1pk: "WHDUE", gsi1sk: `${now}#${fn.function_id}#${legacyId}`,
          delivery_id: legacyId, account_id: fn.account_id, function_id: fn.function_id, run_id: runId, event: "run.succeeded", url: receiver.url,
          status: "pending", attempts: 0, last_status_code: null, last_error: null, next_attempt_at: now, created_at: now, updated_at: now, expires_at: 2_000_000_000,
        },
      }),
    );
    const [, second] = await receiver.waitFor(2);
    expect(second?.headers["webhook-id"]).toBe(legacyId);
    for (let i = 0; i < 100 && (await memory.store.deliveries.get(fn.function_id, legacyId))?.status !== "delivered"; i++) await sleep(20);
    expect(await memory.store.deliveries.get(fn.function_id, legacyId)).toMatchObject({ status: "delivered", attempts: 1 });
  });

  it("still sends a delivery an earlier version left due in its account's partition (gsi1pk WHDUE#<account>), and moves its retry to its receiver's", async () => {
    const runId = `run_${"0".repeat(25)}5`;
    await start(memory.store, runId);
    await receiver.waitFor(1);
    receiver.answers.push(500);
    const legacyId = deliveryIdOf(runId, 1);
    const now = new Date().toISOString();
    const item = {
      pk: `FNID#${fn.function_id}`, sk: `DLV#${legacyId}`, gsi1pk: `WHDUE#${fn.account_id}`, gsi1sk: `${now}#${fn.function_id}#${legacyId}`,
      delivery_id: legacyId, account_id: fn.account_id, function_id: fn.function_id, run_id: runId, event: "run.succeeded", url: receiver.url,
      status: "pending", attempts: 0, last_status_code: null, last_error: null, next_attempt_at: now, created_at: now, updated_at: now, expires_at: 2_000_000_000,
    };
    await memory.doc.send(new PutCommand({ TableName: memory.table, Item: item }));
    await memory.doc.send(new PutCommand({ TableName: memory.table, Item: { pk: "WHDUEACCT", sk: fn.account_id, seq: 1 } }));
    const [, , third] = await receiver.waitFor(3, 10_000);
    // Its first attempt (HTTP 500), then its retry (20 ms later) found in its receiver's partition.
    expect(third?.headers["webhook-id"]).toBe(legacyId);
    for (let i = 0; i < 200 && (await memory.store.deliveries.get(fn.function_id, legacyId))?.status !== "delivered"; i++) await sleep(20);
    expect(await memory.store.deliveries.get(fn.function_id, legacyId)).toMatchObject({ status: "delivered" });
  });

  it("reads each receiver's due deliveries apart: a backlog of 30 on a receiver that never answers does not hide the account's other receiver", async () => {
    const hanging = await startWebhookReceiver();
    hanging.hang = true;
    try {
      const runId = `run_${"0".repeat(25)}4`;
      // One run's end delivered (the dispatcher running), then a backlog written straight into the store.
      await start(memory.store, runId);
      await receiver.waitFor(1);
      const base = Date.now() - 60_000;
      const delivery = (index: number, url: string, at: number) => {
        const when = new Date(at).toISOString();
        return {
          delivery_id: deliveryIdOf(runId, index), account_id: fn.account_id, function_id: fn.function_id, run_id: runId, event: "run.succeeded" as const, url,
          status: "pending" as const, attempts: 0, last_status_code: null, last_error: null, next_attempt_at: when, created_at: when, updated_at: when,
        };
      };
      // Thirty due to the receiver that never answers, older than three due to the one that answers.
      for (let i = 0; i < 30; i++) await memory.store.deliveries.create(delivery(10 + i, hanging.url, base + i));
      for (let i = 0; i < 3; i++) await memory.store.deliveries.create(delivery(50 + i, receiver.url, base + 1_000 + i));
      dispatcher?.wake();
      const started = Date.now();
      await receiver.waitFor(4, 8_000);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(receiver.received.slice(1).map((request) => request.headers["webhook-id"]).sort()).toEqual([50, 51, 52].map((index) => deliveryIdOf(runId, index)));
      // The receiver that never answers has its share under way, no more.
      expect(hanging.received.length).toBeLessThanOrEqual(2);
    } finally {
      await hanging.close();
    }
  });

  it("does not read a receiver's due deliveries while it has its share under way: a receiver that never answers costs each pass nothing", async () => {
    const hanging = await startWebhookReceiver();
    hanging.hang = true;
    try {
      const reads = new Map<string, number>();
      const deliveries = memory.store.deliveries;
      const counting = Object.assign(Object.create(deliveries) as typeof deliveries, {
        dueOf: async (partition: string, now: Date, limit: number) => {
          reads.set(partition, (reads.get(partition) ?? 0) + 1);
          return deliveries.dueOf(partition, now, limit);
        },
      });
      const runId = `run_${"0".repeat(25)}6`;
      await start({ ...memory.store, deliveries: counting }, runId);
      await receiver.waitFor(1);
      // A backlog of ten due to the receiver that never answers.
      const when = new Date(Date.now() - 60_000).toISOString();
      for (let i = 0; i < 10; i++) {
        await deliveries.create({
          delivery_id: deliveryIdOf(runId, 10 + i), account_id: fn.account_id, function_id: fn.function_id, run_id: runId, event: "run.succeeded", url: hanging.url,
          status: "pending", attempts: 0, last_status_code: null, last_error: null, next_attempt_at: when, created_at: when, updated_at: when,
        });
      }
      dispatcher?.wake();
      await hanging.waitFor(2);
      const partition = partitionOf({ account_id: fn.account_id, url: hanging.url });
      const readsWhenFull = reads.get(partition) ?? 0;
      // About 50 passes (every 20 ms), while its two attempts wait (their timeout is 10 s): none reads its partition.
      await sleep(1_000);
      expect((reads.get(partition) ?? 0) - readsWhenFull).toBe(0);
      expect(hanging.received).toHaveLength(2);
    } finally {
      await hanging.close();
    }
  });
});
