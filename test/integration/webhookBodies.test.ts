/**
 * Issue #26 (poisoned webhooks): the body of a run's end is built once and kept, never rebuilt
 * from the run per attempt. Before, every attempt read the run back (its result too: megabytes
 * from its gzipped parts, decoded on the service's thread) to build a body that leaves a result
 * over 256 KB out anyway. Counted on every store request the real service sends to dynalite,
 * and on the real dispatcher over a real store for a run's end made into deliveries after a
 * restart (no body kept at the end: the first attempt builds and keeps it).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { systemClock } from "../../lambdas/deps";
import { endedRun } from "../../lambdas/runs/finishRun";
import { createLocalSecretBox } from "../../lambdas/secrets/localSecretBox";
import { webhookSecretContext } from "../../lambdas/secrets/secretContexts";
import type { DocumentSender } from "../../lambdas/store/dynamo";
import { buildDeliveryBody } from "../../lambdas/webhooks/deliveryBody";
import type { DeliveryBodyBuilder } from "../../lambdas/webhooks/deliveryBodies";
import { LocalWebhookDispatcher } from "../../lambdas/webhooks/localDispatcher";
import { createWebhookOutbox } from "../../lambdas/webhooks/webhookOutbox";
import { deliveryIdOf } from "../../lambdas/webhooks/webhookTypes";
import { startTestService, type TestService } from "../helpers/localService";
import { type MemoryStore, startMemoryStore } from "../helpers/memoryStore";
import { functionItem, runItem } from "../helpers/records";
import { startWebhookReceiver, verifyStandardWebhook, type WebhookReceiver } from "../helpers/webhookReceiver";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/** A result of 400 KB: kept in gzipped parts (over 300 KB), and left out of the body (over 256 KB). */
const BIG_RESULT_FN = `export default async () => ({ filler: "x".repeat(400_000) });\n`;

/** The store requests that read a run's item or its parts, by run id. */
const runReads = new Map<string, number>();

function counted(doc: DocumentSender): DocumentSender {
  const send = (async (command: { input: Record<string, unknown>; constructor: { name: string } }) => {
    const { input } = command;
    const pk = String((input.Key as { pk?: unknown; sk?: unknown } | undefined)?.pk ?? (input.ExpressionAttributeValues as Record<string, unknown> | undefined)?.[":pk"] ?? "");
    const sk = String((input.Key as { sk?: unknown } | undefined)?.sk ?? "");
    const prefix = String((input.ExpressionAttributeValues as Record<string, unknown> | undefined)?.[":prefix"] ?? "");
    const operation = command.constructor.name.replace(/Command$/, "");
    if (pk.startsWith("RUN#") && ((operation === "Get" && sk === "RUN") || (operation === "Query" && prefix === "RESULT#"))) {
      const runId = pk.slice("RUN#".length);
      runReads.set(runId, (runReads.get(runId) ?? 0) + 1);
    }
    return (doc.send as (c: unknown) => Promise<unknown>)(command);
  }) as unknown as DocumentSender["send"];
  return { send } as DocumentSender;
}

describe("a run's webhook body, built once", () => {
  let t: TestService;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    // Retries after 20 ms, then 1.2 s; due deliveries looked for every 50 ms.
    t = await startTestService({ config: { webhooks: { retryBaseMs: 20, pollMs: 50 } }, serviceOptions: { wrapStoreClient: counted } });
  });
  afterAll(async () => {
    await t.destroy();
    await receiver.close();
  });

  it("sends the same kept bytes on every attempt, built on the result thread, without reading the run back", async () => {
    const created = await t.deploy("big-result", BIG_RESULT_FN, { webhooks: [{ url: receiver.url }] });
    receiver.answers = [500, 500];
    const builtBefore = t.service.resultParsing().bodies;
    const invoked = await t.call("POST", "/functions/big-result");
    expect(invoked.status).toBe(200);
    const runId = String(invoked.headers.get("x-run-id"));
    const readsAtEnd = runReads.get(runId) ?? 0;
    const requests = await receiver.waitFor(3, 30_000);
    expect(requests.map((request) => request.answered)).toEqual([500, 500, 200]);
    // The same event each time: the same id and the same bytes, each attempt signed anew.
    expect(new Set(requests.map((request) => request.headers["webhook-id"]))).toEqual(new Set([deliveryIdOf(runId, 0)]));
    expect(new Set(requests.map((request) => request.body)).size).toBe(1);
    for (const request of requests) expect(verifyStandardWebhook(created.webhook_secret, request)).toBe(true);
    const body = JSON.parse(String(requests[0]?.body));
    expect(body).toMatchObject({ type: "run.succeeded", data: { run: { run_id: runId, status: "succeeded", result: null }, omitted: ["result"] } });
    // No attempt read the run (before: each read its item and its result's parts, 6 reads); built once, on the result thread.
    await sleep(200); // the last attempt's record is written
    expect((runReads.get(runId) ?? 0) - readsAtEnd).toBe(0);
    expect(t.service.resultParsing().bodies - builtBefore).toBe(1);
    // What GET /runs/{id} shows, but for the result the body leaves out.
    const run = await t.call("GET", `/runs/${runId}`);
    expect(body.data.run).toEqual({ ...run.body, result: null });
  });
});

describe("a run's end made into deliveries after a restart (no body kept at its end)", () => {
  let memory: MemoryStore;
  let receiver: WebhookReceiver;
  let dir: string;
  let dispatcher: LocalWebhookDispatcher | undefined;

  beforeEach(async () => {
    memory = await startMemoryStore();
    receiver = await startWebhookReceiver();
    dir = await mkdtemp(path.join(tmpdir(), "browserfn-webhook-bodies-"));
  });
  afterEach(async () => {
    await dispatcher?.close();
    await memory.close();
    await receiver.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("has its body built by the first attempt and kept: later attempts neither read the run nor build again", async () => {
    const fn = functionItem({ webhooks: [] });
    const secretBox = await createLocalSecretBox(dir);
    const sealed = await secretBox.seal(SECRET, webhookSecretContext(fn.function_id));
    await memory.store.functions.create({ ...fn, webhooks: [{ url: receiver.url, events: ["run.succeeded"] }], webhook_secret_sealed: sealed });
    // The service died between the run's final write (its outbox entry with it) and its deliveries.
    const runId = `run_${"0".repeat(25)}7`;
    const run = runItem(fn, { run_id: runId, queued_at: new Date().toISOString() });
    await memory.store.runs.put(run);
    const final = endedRun(run, { status: "succeeded", result_json: JSON.stringify({ filler: "y".repeat(400_000) }), error: null, logs: "", duration_ms: 5, browser_ms: 0, peak_memory_mb: null }, new Date().toISOString());
    expect(await memory.store.runs.putIfActive(final, [{ delivery_id: deliveryIdOf(runId, 0), url: receiver.url, event: "run.succeeded" }])).toBe(true);

    let reads = 0;
    const runs = Object.assign(Object.create(memory.store.runs) as typeof memory.store.runs, {
      get: async (id: string) => {
        if (id === runId) reads++;
        return memory.store.runs.get(id);
      },
    });
    let builds = 0;
    const bodies: DeliveryBodyBuilder = {
      build: async (_account, input) => {
        builds++;
        return buildDeliveryBody(input);
      },
    };
    const store = { ...memory.store, runs };
    receiver.answers = [500, 500];
    const log = () => undefined;
    dispatcher = new LocalWebhookDispatcher({ store, secretBox, clock: systemClock, log, allowLocalNetwork: true, retryBaseMs: 20, bodies }, { pollMs: 20 });
    // Started as the service starts: every outbox entry left is made into deliveries at once.
    dispatcher.start(createWebhookOutbox({ store, queue: dispatcher, clock: systemClock, log, bodies }));
    const requests = await receiver.waitFor(3, 30_000);
    expect(requests.map((request) => request.answered)).toEqual([500, 500, 200]);
    expect(new Set(requests.map((request) => request.body)).size).toBe(1);
    expect({ reads, builds }).toEqual({ reads: 1, builds: 1 });
    expect(await memory.store.deliveries.getBody(runId)).toMatchObject({ run_id: runId, function_id: fn.function_id, account_id: fn.account_id, event: "run.succeeded" });
  });
});
