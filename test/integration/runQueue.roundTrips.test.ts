/**
 * The store's round trips from a freed slot to the next queued run starting (issue #27, round 4
 * session 12), read off every store request the real service sends to dynalite, in order:
 * - a run that came out of the queue gives its slot back beside its final record, not after it;
 * - the queue's next run is looked up beside that release, not after its answer;
 * - a queue item that held its parameters itself is claimed without a query for parameter parts,
 *   and one whose parameters were over an item still has its parts deleted.
 */
import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import type { DocumentSender } from "../../lambdas/store/dynamo";
import { DEFAULT_PLANS } from "../../lambdas/config/plans";
import { startTestService, type TestService } from "../helpers/localService";

const plans = { ...DEFAULT_PLANS, one: { concurrency: 1, invocations_per_month: 10_000, max_timeout_seconds: 300, max_memory_mb: 2048, max_queued: 100 } };

interface Sent {
  n: number;
  operation: string;
  input: Record<string, unknown>;
  /** Index in `events` of its start and of its answer. */
  start: number;
  end?: number;
}

const events: { n: number; kind: "start" | "end" }[] = [];
const sent: Sent[] = [];

/** Logs each store request's start and answer, in the order they happen. */
function logged(doc: DocumentSender): DocumentSender {
  const send = (async (command: { input: Record<string, unknown>; clientCommand?: object; constructor: { name: string } }) => {
    const entry: Sent = { n: sent.length, operation: command.constructor.name.replace(/Command$/, ""), input: command.input, start: events.length };
    sent.push(entry);
    events.push({ n: entry.n, kind: "start" });
    try {
      return await (doc.send as (c: unknown) => Promise<unknown>)(command);
    } finally {
      entry.end = events.length;
      events.push({ n: entry.n, kind: "end" });
    }
  }) as unknown as DocumentSender["send"];
  return { send } as DocumentSender;
}

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ config: { plans, syncWaitSeconds: 60, workers: { perFunction: 2, total: 4, idleSeconds: 60 } }, serviceOptions: { wrapStoreClient: logged } });
});
afterAll(() => t.destroy());

const pkOf = (entry: Sent) => String((entry.input.Key as { pk?: string } | undefined)?.pk ?? (entry.input.Item as { pk?: string } | undefined)?.pk ?? (entry.input.ExpressionAttributeValues as Record<string, unknown> | undefined)?.[":pk"] ?? "");
const expressionOf = (entry: Sent) => String(entry.input.UpdateExpression ?? "");
const namesOf = (entry: Sent) => Object.values((entry.input.ExpressionAttributeNames as Record<string, string> | undefined) ?? {});
const isRelease = (entry: Sent, runId: string) => entry.operation === "Update" && /^REMOVE leases\.#lease/.test(expressionOf(entry)) && namesOf(entry).includes(runId);
const isTakeLease = (entry: Sent, runId: string) => entry.operation === "Update" && expressionOf(entry).includes("rr_cursor = :fn") && namesOf(entry).includes(runId);
const isFinalRecord = (entry: Sent, runId: string) => {
  const item = entry.input.Item as { run_id?: string; finished_at?: string | null } | undefined;
  return entry.operation === "Put" && item?.run_id === runId && typeof item.finished_at === "string";
};
const isQueueQuery = (entry: Sent) => entry.operation === "Query" && pkOf(entry).startsWith("QUEUE#");
const isPartsQuery = (entry: Sent) => isQueueQuery(entry) && String((entry.input.ExpressionAttributeValues as Record<string, unknown>)[":prefix"] ?? "").startsWith("PARAMS#");

const STAMPED = `export default async (ms: number = 30, pad: string = "") => {
  const entered = Date.now();
  await new Promise((r) => setTimeout(r, ms));
  return { entered, left: Date.now(), padded: pad.length };
}`;

describe("from a freed slot to the next queued run", () => {
  it("releases beside the final record, looks up the next run beside the release, and claims it without a parts query", async () => {
    const key = await t.newAccount("round-trips", "one");
    await t.deploy("stamped", STAMPED, {}, key);
    await t.call("POST", "/functions/stamped", { token: key, body: { ms: 1 } }); // the worker is warm
    sent.length = 0;
    events.length = 0;
    // Sync calls on a plan of one run at a time: the first is admitted, the others queue, and each
    // caller waits for its own run's end (no polling requests between the runs).
    const answers = await Promise.all(Array.from({ length: 5 }, () => t.call("POST", "/functions/stamped", { token: key, body: { ms: 30, pad: "" } })));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    const runIds = answers.map((answer) => answer.headers.get("x-run-id") ?? "");
    const fromQueue = runIds.filter((runId) => sent.some((entry) => isTakeLease(entry, runId)));
    expect(fromQueue.length).toBeGreaterThanOrEqual(3);

    for (const runId of fromQueue) {
      const release = sent.find((entry) => isRelease(entry, runId));
      const final = sent.find((entry) => isFinalRecord(entry, runId));
      expect(release && final).toBeTruthy();
      // Beside the final record: the release is sent before the record's answer is back.
      expect(release!.start).toBeLessThan(final!.end!);
      // The next run's lease (if one was queued then) is taken with no queue query sent after the
      // release's answer: the lookup went out beside it.
      const nextTake = sent.find((entry) => entry.start > release!.start && entry.operation === "Update" && expressionOf(entry).includes("rr_cursor = :fn"));
      if (nextTake) {
        const queriesAfter = sent.filter((entry) => isQueueQuery(entry) && entry.start > release!.end! && entry.start < nextTake.start);
        expect(queriesAfter.map((entry) => entry.input)).toEqual([]);
      }
    }
    // Parameters small enough for the queue item: no query for parts when it is claimed.
    expect(sent.filter(isPartsQuery).map((entry) => entry.input)).toEqual([]);
  }, 120_000);

  it("still deletes the parts of queued parameters over an item", async () => {
    const key = await t.newAccount("round-trips-parts", "one");
    await t.deploy("stamped", STAMPED, {}, key);
    sent.length = 0;
    events.length = 0;
    const pad = "x".repeat(150_000);
    const answers = await Promise.all(Array.from({ length: 3 }, () => t.call("POST", "/functions/stamped", { token: key, body: { ms: 30, pad } })));
    expect(answers.map((answer) => [answer.status, (answer.body as { padded?: number }).padded])).toEqual([
      [200, 150_000],
      [200, 150_000],
      [200, 150_000],
    ]);
    const partsQueries = sent.filter(isPartsQuery);
    expect(partsQueries.length).toBeGreaterThanOrEqual(2); // one read and one delete lookup per queued run at least
    // Nothing of them is left in the queue's partition.
    const account = String(pkOf(partsQueries[0]!)).slice("QUEUE#".length);
    const left = await t.service.deps.store.queueItems.count(account);
    expect(left).toBe(0);
    const doc = (t.service.deps.store.queueItems as unknown as { doc: DocumentSender; table: string });
    const parts = await doc.doc.send(new QueryCommand({ TableName: doc.table, KeyConditionExpression: "pk = :pk AND begins_with(sk, :p)", ExpressionAttributeValues: { ":pk": `QUEUE#${account}`, ":p": "PARAMS#" }, ConsistentRead: true }));
    expect(parts.Items ?? []).toEqual([]);
  }, 120_000);
});
