import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { startMemoryStore, type MemoryStore } from "../helpers/memoryStore";

// #23.6: the LIMITS item (admissions, releases, the run queue's counters) is written on every
// run; it has a partition of its own, not the account's `ACCOUNT#` one (its record, functions
// and usage), and an item left at the legacy key by an older version is moved, leases and
// counts with it. On dynalite.

const NOW = new Date("2026-11-27T12:00:00.000Z");
const LIMITS = { concurrency: 1, invocationsPerMonth: 100 };
const UNTIL = NOW.getTime() + 600_000;

describe("the LIMITS item's partition", () => {
  let memory: MemoryStore;
  beforeAll(async () => {
    memory = await startMemoryStore();
  });
  afterAll(async () => {
    await memory.close();
  });

  const get = async (pk: string, sk: string) => (await memory.doc.send(new GetCommand({ TableName: memory.table, Key: { pk, sk } }))).Item;

  it("keeps admissions and queue counts out of the account's partition", async () => {
    const { store } = memory;
    await store.accounts.ensureAccount({ account_id: "solo", plan: "free", created_at: NOW.toISOString() });
    expect(await store.limits.admit("solo", "run_1", LIMITS, UNTIL, NOW)).toEqual({ admitted: true });
    expect(await store.queueCounts.enqueue("solo", { quota: 100, maxQueued: 10, counted: false }, "2026-11")).toBe("counted");
    const items = await memory.scan();
    const account = items.filter((item) => item.pk === "ACCOUNT#solo").map((item) => item.sk);
    expect(account).not.toContain("LIMITS");
    expect(await get("LIMITS#solo", "LIMITS")).toMatchObject({ leases: { run_1: UNTIL }, invocations: 2, queued: 1, month_key: "2026-11" });
  });

  it("moves a legacy LIMITS item on first use: its leases and this month's count hold", async () => {
    const { store } = memory;
    await memory.doc.send(
      new PutCommand({ TableName: memory.table, Item: { pk: "ACCOUNT#old", sk: "LIMITS", leases: { run_old: UNTIL }, month_key: "2026-11", invocations: 7 } }),
    );
    // The old lease still holds the one slot.
    expect(await store.limits.admit("old", "run_new", LIMITS, UNTIL, NOW)).toMatchObject({ admitted: false, limit: "concurrency", used: 7 });
    expect(await get("ACCOUNT#old", "LIMITS")).toBeUndefined();
    expect(await store.limits.current("old", NOW)).toEqual({ invocations: 7, inFlight: 1 });
    await store.limits.release("old", "run_old");
    expect(await store.limits.admit("old", "run_new", LIMITS, UNTIL, NOW)).toEqual({ admitted: true });
    expect(await store.limits.current("old", NOW)).toEqual({ invocations: 8, inFlight: 1 });
  });

  it("releases a lease held in a legacy item that nothing has moved yet", async () => {
    const { store } = memory;
    await memory.doc.send(
      new PutCommand({
        TableName: memory.table,
        Item: { pk: "ACCOUNT#idle", sk: "LIMITS", leases: { run_a: UNTIL, run_b: UNTIL }, month_key: "2026-11", invocations: 3, queued: 0 },
      }),
    );
    expect(await store.limits.release("idle", "run_a")).toMatchObject({ queued: 0, item: { leases: { run_b: UNTIL }, invocations: 3 } });
    expect(await get("ACCOUNT#idle", "LIMITS")).toBeUndefined();
    expect(await store.limits.leaseIds("idle")).toEqual(["run_b"]);
  });

  it("spreads the sweep's list of accounts with queued runs over gsi1 partitions, and still finds those marked before", async () => {
    const { store } = memory;
    const accounts = Array.from({ length: 12 }, (_, i) => `queued-${i}`);
    for (const account of accounts) {
      await store.limits.ensureMonth(account, NOW);
      expect(await store.queueCounts.enqueue(account, { quota: 100, maxQueued: 10, counted: false }, "2026-11")).toBe("counted");
    }
    const markers = await Promise.all(accounts.map(async (account) => (await get(`LIMITS#${account}`, "LIMITS"))?.gsi1pk));
    expect(markers.every((pk) => typeof pk === "string" && /^QUEUED#[0-9]+$/.test(pk))).toBe(true);
    expect(new Set(markers).size).toBeGreaterThanOrEqual(4);
    // An item marked by an older version, in the one QUEUED partition.
    await memory.doc.send(
      new PutCommand({ TableName: memory.table, Item: { pk: "LIMITS#marked-before", sk: "LIMITS", leases: {}, month_key: "2026-11", invocations: 1, queued: 1, gsi1pk: "QUEUED", gsi1sk: "marked-before" } }),
    );
    expect((await store.queueCounts.accountsWithQueued()).sort()).toEqual([...accounts, "marked-before", "solo"].sort());
  });

  it("answers an admission at the limit with one refused write and one read: no retry loop on the item", async () => {
    const { store } = memory;
    expect(await store.limits.admit("busy", "run_0", LIMITS, UNTIL, NOW)).toEqual({ admitted: true });
    const before = memory.storeCalls();
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => store.limits.admit("busy", `run_${i + 1}`, LIMITS, UNTIL, NOW)));
    expect(answers.every((answer) => !answer.admitted && answer.limit === "concurrency")).toBe(true);
    expect(memory.storeCalls() - before).toBe(40);
  });
});
