import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { StorageLimitError, withStorageBudget } from "../../lambdas/artifacts/storageBudget";
import { expiryDay } from "../../lambdas/store/storageStore";
import { type MemoryStore, startMemoryStore } from "../helpers/memoryStore";
import { functionItem, runItem } from "../helpers/records";

// What an account holds (issue #26 item 6): the count against the plan's cap, by expiry day, and
// the expiry every item of a run carries (DynamoDB's TTL deletes them on AWS).

const DAY_S = 86_400;
const at = (iso: string) => new Date(iso);
const epoch = (iso: string) => Math.floor(Date.parse(iso) / 1000);

describe("StorageStore", () => {
  let memory: MemoryStore;
  beforeAll(async () => {
    memory = await startMemoryStore({ runRetentionDays: 3 });
  });
  afterAll(() => memory.close());

  it("reserves under the cap only, per account, and gives back what is released", async () => {
    const { storage } = memory.store;
    const now = at("2026-03-01T10:00:00Z");
    const expires = epoch("2026-03-08T10:00:00Z");
    expect(await storage.reserve("a", 600, expires, 1000, now)).toBe(true);
    expect(await storage.reserve("a", 500, expires, 1000, now)).toBe(false);
    expect(await storage.reserve("b", 900, expires, 1000, now)).toBe(true);
    expect(await storage.reserve("a", 400, expires, 1000, now)).toBe(true);
    expect(await storage.held("a", now)).toBe(1000);
    await storage.release("a", 300, expires);
    expect(await storage.held("a", now)).toBe(700);
    // A result is counted whatever the cap.
    await storage.add("a", 5000, expires, now);
    expect(await storage.held("a", now)).toBe(5700);
    expect(await storage.reserve("a", 1, expires, 1000, now)).toBe(false);
    expect(await storage.held("b", now)).toBe(900);
  });

  it("lets go of what expired once its expiry day has passed, without being told", async () => {
    const { storage } = memory.store;
    const now = at("2026-03-01T10:00:00Z");
    await storage.add("c", 100, epoch("2026-03-02T23:00:00Z"), now);
    await storage.add("c", 40, epoch("2026-03-05T01:00:00Z"), now);
    expect(await storage.held("c", at("2026-03-02T23:30:00Z"))).toBe(140);
    expect(await storage.held("c", at("2026-03-03T00:00:00Z"))).toBe(40);
    // The cap sees the same: room again once the day has passed.
    expect(await storage.reserve("c", 150, epoch("2026-03-09T00:00:00Z"), 200, at("2026-03-03T00:00:01Z"))).toBe(true);
    expect(await storage.held("c", at("2026-03-06T00:00:00Z"))).toBe(150);
    // Released after its day has passed: nothing is given back twice.
    await storage.release("c", 40, epoch("2026-03-05T01:00:00Z"));
    expect(await storage.held("c", at("2026-03-06T00:00:00Z"))).toBe(150);
  });

  it("counts a run's record (params, result, logs) once it ends, until the run expires", async () => {
    const fn = functionItem({ account_id: "d" });
    const run = runItem(fn, { run_id: "run_d", queued_at: "2026-04-01T12:00:00.000Z", status: "succeeded", result_json: '"abc"', logs: "12345", params: { x: 1 } });
    await memory.store.meters.recordRun(run);
    const bytes = Buffer.byteLength('{"x":1}') + 5 + 5;
    expect(await memory.store.storage.held("d", at("2026-04-01T13:00:00Z"))).toBe(bytes);
    // The run retention here is 3 days: gone from the count from the day after its expiry.
    expect(expiryDay(epoch(run.queued_at) + 3 * DAY_S)).toBe("2026-04-04");
    expect(await memory.store.storage.held("d", at("2026-04-05T00:00:00Z"))).toBe(0);
  });
});

describe("run items carry their expiry (DynamoDB TTL on AWS)", () => {
  it("sets expires_at = queued_at + the run retention on the run item and every part item", async () => {
    const memory = await startMemoryStore({ runRetentionDays: 3 });
    try {
      const fn = functionItem({ account_id: "e" });
      const big = "x".repeat(2_000_000);
      const run = runItem(fn, { run_id: "run_e", queued_at: "2026-05-01T00:00:00.000Z", status: "succeeded", result_json: JSON.stringify({ big }), params: { big: big.slice(0, 100_000) } });
      await memory.store.runs.put(run);
      const { Items = [] } = await memory.doc.send(new QueryCommand({ TableName: memory.table, KeyConditionExpression: "pk = :pk", ExpressionAttributeValues: { ":pk": "RUN#run_e" } }));
      const kinds = new Set(Items.map((item) => String(item.sk).replace(/#.*$/, "")));
      expect(kinds).toEqual(new Set(["RUN", "RESULT", "PARAMS"]));
      for (const item of Items) expect(item.expires_at).toBe(epoch("2026-05-04T00:00:00Z"));
    } finally {
      await memory.close();
    }
  });
});

describe("withStorageBudget (what artifacts.save is told at a run's start)", () => {
  const sink = () => {
    const saved: string[] = [];
    return { saved, save: async (name: string, data: Uint8Array, _contentType: string) => (saved.push(name), { name, url: `u/${name}`, bytes: data.byteLength }) };
  };

  it("refuses a file past the room with storage_limit_exceeded and sends nothing of it", async () => {
    const inner = sink();
    const budgeted = withStorageBudget(inner, 100);
    await budgeted.save("a", new Uint8Array(60), "x/y");
    const refused = await budgeted.save("b", new Uint8Array(50), "x/y").catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StorageLimitError);
    expect((refused as StorageLimitError).code).toBe("storage_limit_exceeded");
    expect((refused as Error).message).toMatch(/'b' \(50 bytes\) would pass the 100 bytes/);
    // The same name again spends only what it grew by.
    await budgeted.save("a", new Uint8Array(90), "x/y");
    expect(inner.saved).toEqual(["a", "a"]);
  });

  it("leaves the sink as it is when the service says no room", () => {
    const inner = sink();
    expect(withStorageBudget(inner, undefined)).toBe(inner);
  });
});
