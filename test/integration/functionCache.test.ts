import type { FunctionItem } from "../../lambdas/functions/types";
import { CachedFunctionStore } from "../../lambdas/store/cachedFunctionStore";
import { FunctionStore } from "../../lambdas/store/functionStore";
import type { Store } from "../../lambdas/store/store";
import { startMemoryStore } from "../helpers/memoryStore";
import { functionItem } from "../helpers/records";

let memory: Awaited<ReturnType<typeof startMemoryStore>>;
let store: Store;

beforeAll(async () => {
  memory = await startMemoryStore({ soleWriter: true });
  store = memory.store;
});
afterAll(() => memory.close());

let counter = 0;
function fnItem(overrides: Partial<FunctionItem> = {}): FunctionItem {
  counter++;
  return functionItem({
    function_id: `fn_${String(counter).padStart(26, "0")}`,
    name: `f${counter}`,
    variables: [{ name: "url", type: "string", required: true }],
    ...overrides,
  });
}

/** Store requests made by `work`. */
async function callsOf(work: () => Promise<unknown>): Promise<number> {
  const before = memory.storeCalls();
  await work();
  return memory.storeCalls() - before;
}

describe("function records cached by the only writer of the store", () => {
  it("reads a record from the store once, then from memory, by name and by id", async () => {
    const fn = fnItem();
    expect(await store.functions.create(fn)).toBe(true);
    expect(await callsOf(() => store.functions.getByName("acct", fn.name))).toBe(1);
    expect(await callsOf(() => store.functions.getByName("acct", fn.name))).toBe(0);
    expect(await callsOf(() => store.functions.getById(fn.function_id))).toBe(0);
    expect(await store.functions.getById(fn.function_id)).toEqual(fn);
    const cached = await store.functions.getByName("acct", fn.name);
    expect(Object.isFrozen(cached)).toBe(true);
  });

  it("overrides every method that writes a record (a new one must drop what it changes)", () => {
    const reads = ["constructor", "getByName", "getById", "list", "listEverywhere", "listEverywherePage", "listDeployingSince", "toItem"];
    const writes = Object.getOwnPropertyNames(FunctionStore.prototype).filter((name) => !reads.includes(name));
    expect(writes.sort()).toEqual(["create", "delete", "markHasSecrets", "replace", "setNextRun", "setStatus", "setWebhookSecret"]);
    for (const name of writes) expect(Object.getOwnPropertyNames(CachedFunctionStore.prototype)).toContain(name);
  });

  it("never caches a missing record", async () => {
    expect(await callsOf(() => store.functions.getByName("acct", "nothing"))).toBe(1);
    expect(await callsOf(() => store.functions.getByName("acct", "nothing"))).toBe(1);
  });

  it("answers every read after a write with what the write left", async () => {
    const fn = fnItem({ status: "deploying" });
    await store.functions.create(fn);
    await store.functions.getByName("acct", fn.name);

    const replaced = { ...fn, description: "second", revision: 2 };
    expect(await store.functions.replace(fn, replaced)).toBe(true);
    expect((await store.functions.getByName("acct", fn.name))?.description).toBe("second");

    expect((await store.functions.setStatus(replaced, "active", null))?.status).toBe("active");
    expect((await store.functions.getByName("acct", fn.name))?.status).toBe("active");

    await store.functions.setNextRun(replaced, "2026-11-23T00:00:00.000Z");
    expect((await store.functions.getById(fn.function_id))?.next_run_at).toBe("2026-11-23T00:00:00.000Z");

    const current = await store.functions.getByName("acct", fn.name);
    expect(await store.functions.delete(current!)).toBe(true);
    expect(await store.functions.getByName("acct", fn.name)).toBeUndefined();
    expect(await store.functions.getById(fn.function_id)).toBeUndefined();
  });

  it("does not keep what a read fetched before a write that ended while the answer was on its way", async () => {
    const fn = fnItem();
    await store.functions.create(fn);
    memory.delayAnswers(200, "GetCommand");
    try {
      const racingRead = store.functions.getByName("acct", fn.name);
      await new Promise((resolve) => setTimeout(resolve, 50)); // dynalite has answered the read
      await store.functions.replace(fn, { ...fn, description: "new", revision: 2 });
      expect((await racingRead)?.description).toBeNull();
    } finally {
      memory.delayAnswers(0, "");
    }
    expect((await store.functions.getByName("acct", fn.name))?.description).toBe("new");
  });

  it("finds a re-created name by its new id only", async () => {
    const first = fnItem();
    await store.functions.create(first);
    await store.functions.getByName("acct", first.name);
    await store.functions.delete(first);
    const second = fnItem({ name: first.name });
    await store.functions.create(second);
    await store.functions.getByName("acct", second.name);
    expect(await store.functions.getById(first.function_id)).toBeUndefined();
    expect((await store.functions.getById(second.function_id))?.function_id).toBe(second.function_id);
  });

  it("keeps at most 1000 records, dropping the least recently used", async () => {
    const first = fnItem();
    await store.functions.create(first);
    await store.functions.getByName("acct", first.name);
    expect(await callsOf(() => store.functions.getByName("acct", first.name))).toBe(0);
    const others = Array.from({ length: 1000 }, () => fnItem());
    for (let batch = 0; batch < 1000; batch += 50) {
      await Promise.all(others.slice(batch, batch + 50).map((fn) => store.functions.create(fn)));
    }
    // Reads that no write overlaps fill the cache.
    for (let batch = 0; batch < 1000; batch += 50) {
      await Promise.all(others.slice(batch, batch + 50).map((fn) => store.functions.getByName("acct", fn.name)));
    }
    expect(await callsOf(() => store.functions.getByName("acct", others[999]!.name))).toBe(0);
    expect(await callsOf(() => store.functions.getByName("acct", first.name))).toBe(1);
  }, 60_000);
});
