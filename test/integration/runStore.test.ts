import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { startMemoryStore } from "../helpers/memoryStore";
import { functionItem, runItem } from "../helpers/records";

describe("the run store", () => {
  it("keeps params as exact JSON text, large ones in parts, and removes a never-started run's parts with it", async () => {
    const memory = await startMemoryStore();
    const { store } = memory;
    try {
      const fn = functionItem();
      const odd = { big: 2 ** 60, tiny: 1e-200, deep: JSON.parse("[".repeat(40) + "]".repeat(40)) as unknown };
      const small = runItem(fn, { run_id: "run_small", params: odd });
      await store.runs.put(small);
      expect((await store.runs.get("run_small"))?.params).toEqual(odd);

      const large = runItem(fn, { run_id: "run_large", params: { text: "x".repeat(200_000) }, result_json: JSON.stringify("r".repeat(400_000)) });
      await store.runs.put(large);
      expect(await store.runs.get("run_large")).toEqual(large);
      const listed = await store.runs.recent(fn.function_id, 10);
      expect(listed.find((run) => run.run_id === "run_large")).toMatchObject({ params: {}, result_json: null }); // not read for lists
      expect((await store.runs.listActive()).find((run) => run.run_id === "run_large")?.params).toEqual(large.params);

      const refused = runItem(fn, { run_id: "run_refused", status: "queued", params: { text: "y".repeat(100_000) } });
      await store.runs.put(refused);
      const partsOf = async (runId: string) =>
        (await memory.scan()).filter((item) => item.pk === `RUN#${runId}` && String(item.sk).startsWith("PARAMS#")).length;
      expect(await partsOf("run_refused")).toBeGreaterThan(0);
      await store.runs.deleteIfQueued("run_refused");
      expect(await store.runs.get("run_refused")).toBeUndefined();
      expect(await partsOf("run_refused")).toBe(0);
    } finally {
      await memory.close();
    }
  });

  it("reads runs written before params were kept as text (a params map)", async () => {
    const memory = await startMemoryStore();
    try {
      const legacy = runItem(functionItem(), { run_id: "run_legacy", status: "succeeded", params: { url: "https://example.com" } });
      await memory.doc.send(new PutCommand({ TableName: memory.table, Item: { pk: "RUN#run_legacy", sk: "RUN", ...legacy } }));
      expect(await memory.store.runs.get("run_legacy")).toEqual(legacy);
    } finally {
      await memory.close();
    }
  });
});
