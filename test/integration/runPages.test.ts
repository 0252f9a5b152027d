import { PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import type { RunItem } from "../../lambdas/runs/types";
import { RUN_LIST_ATTRIBUTES } from "../../lambdas/store/tables";
import { type MemoryStore, startMemoryStore } from "../helpers/memoryStore";
import { functionItem, runItem } from "../helpers/records";

const NOW = new Date("2026-03-01T12:00:00.000Z");
const fn = functionItem();
const sorted = (names: string[]) => [...names].sort();
const runId = (n: number) => `run_${String(n).padStart(6, "0")}`;
const at = (offsetMs: number) => new Date(NOW.getTime() + offsetMs).toISOString();

/** A finished run with everything a listing must not carry: params, a result, logs, a completion token. */
function finishedRun(n: number, logs: string): RunItem {
  return runItem(fn, {
    run_id: runId(n),
    status: "succeeded",
    params: { url: "https://example.com", n },
    result_json: JSON.stringify({ title: "r".repeat(1000) }),
    logs,
    finished_at: at(0),
    duration_ms: n,
    deadline_at: at(600_000),
  });
}

describe("run listings and the active runs", () => {
  let memory: MemoryStore;
  beforeEach(async () => {
    memory = await startMemoryStore();
  });
  afterEach(() => memory.close());

  const indexItems = async (indexName: string, key: string, value: string) =>
    (
      await memory.doc.send(
        new QueryCommand({ TableName: memory.table, IndexName: indexName, KeyConditionExpression: `${key} = :v`, ExpressionAttributeValues: { ":v": value } }),
      )
    ).Items ?? [];

  it("the runs index keeps what a listing reads, never params, results, logs or the completion token", async () => {
    await memory.store.runs.put(finishedRun(1, "log line\n".repeat(100)));

    const [entry, ...more] = await indexItems("runs", "runs_pk", `FNID#${fn.function_id}#RUNS`);
    expect(more).toEqual([]);
    expect(sorted(Object.keys(entry ?? {}))).toEqual(sorted(["pk", "sk", "runs_pk", "runs_sk", ...RUN_LIST_ATTRIBUTES]));
    expect(entry).toMatchObject({ runs_sk: runId(1), status: "succeeded", duration_ms: 1, deadline_at: at(600_000) });
    // Runs no longer go to gsi1, which keeps every attribute.
    expect(await indexItems("gsi1", "gsi1pk", `FNID#${fn.function_id}#RUNS`)).toEqual([]);

    const [listed] = await memory.store.runs.recent(fn.function_id, 10);
    expect(listed).toEqual({ ...finishedRun(1, ""), params: {}, result_json: null });
  });

  it("lists the newest 1000 of 1,050 runs with 60 KB of logs each, page after page", async () => {
    const logs = "x".repeat(60_000);
    // Errors are listed: 1.5 KB of message each puts the 1000 entries over one page's 1 MB.
    const error = { code: "function_error", message: "e".repeat(1500) };
    const runs = Array.from({ length: 1050 }, (_, n) => ({ ...finishedRun(n, logs), status: "failed" as const, error }));
    for (let start = 0; start < runs.length; start += 50) {
      await Promise.all(runs.slice(start, start + 50).map((run) => memory.store.runs.put(run)));
    }

    const callsBefore = memory.storeCalls();
    const listed = await memory.store.runs.recent(fn.function_id, 1000);
    expect(listed.map((run) => run.run_id)).toEqual(Array.from({ length: 1000 }, (_, i) => runId(1049 - i)));
    expect(memory.storeCalls() - callsBefore).toBe(2);
    expect(listed.every((run) => run.logs === "" && run.status === "failed" && run.error?.message === error.message)).toBe(true);
    expect((await memory.store.runs.recent(fn.function_id, 3)).map((run) => run.run_id)).toEqual([runId(1049), runId(1048), runId(1047)]);
  }, 60_000);

  it("still lists runs written before the runs index (gsi1 only), after the newer ones", async () => {
    for (const n of [1, 2, 3]) {
      const { params: _params, deadline_at: _deadline, ...old } = finishedRun(n, "old logs");
      await memory.doc.send(
        new PutCommand({
          TableName: memory.table,
          Item: { ...old, params_json: "{}", pk: `RUN#${runId(n)}`, sk: "RUN", gsi1pk: `FNID#${fn.function_id}#RUNS`, gsi1sk: runId(n) },
        }),
      );
    }
    for (const n of [4, 5]) await memory.store.runs.put(finishedRun(n, "new logs"));

    const listed = await memory.store.runs.recent(fn.function_id, 4);
    expect(listed.map((run) => run.run_id)).toEqual([runId(5), runId(4), runId(3), runId(2)]);
    // Old runs have no deadline_at: theirs is that of the longest timeout (15 min) and the margin.
    expect(listed[2]).toMatchObject({ status: "succeeded", logs: "", params: {}, deadline_at: "2026-01-01T00:27:00.000Z" });
    expect((await memory.store.runs.recent(fn.function_id, 10)).map((run) => run.run_id)).toEqual([5, 4, 3, 2, 1].map(runId));
  });

  it("finds the queued and running runs past their deadline, most overdue first, across every shard", async () => {
    const active = (n: number, status: RunItem["status"], deadlineOffsetMs: number) =>
      runItem(fn, { run_id: runId(n), status, deadline_at: at(deadlineOffsetMs), started_at: status === "queued" ? null : at(-1) });
    const overdue = Array.from({ length: 20 }, (_, n) => active(n, n % 2 === 0 ? "queued" : "running", -60_000 * (n + 1)));
    const notYet = [active(100, "running", 1), active(101, "queued", 60_000)];
    const ended = { ...active(102, "running", -1), status: "failed" as const, finished_at: at(0) };
    for (const run of [...overdue, ...notYet]) await memory.store.runs.put(run);
    await memory.store.runs.put(active(102, "running", -1));
    expect(await memory.store.runs.putIfActive(ended)).toBe(true);

    const found = await memory.store.runs.listOverdue(NOW, 100);
    expect(found.map((run) => run.run_id)).toEqual([...overdue].reverse().map((run) => run.run_id));
    expect(found[0]).toEqual(overdue[19]);
    expect((await memory.store.runs.listOverdue(NOW, 3)).map((run) => run.run_id)).toEqual([runId(19), runId(18), runId(17)]);

    // Spread over shards; a final write leaves the index.
    const shards = Array.from({ length: 8 }, (_, shard) => indexItems("gsi1", "gsi1pk", `ACTIVE#${shard}`));
    const entries = (await Promise.all(shards)).flat();
    expect(entries.length).toBe(22);
    expect(new Set(entries.map((entry) => entry.gsi1pk)).size).toBeGreaterThan(1);
    expect(entries.some((entry) => entry.pk === `RUN#${runId(102)}`)).toBe(false);
    expect(entries.find((entry) => entry.pk === `RUN#${runId(0)}`)?.gsi1sk).toBe(`${at(-60_000)}#${runId(0)}`);

    // A run that ended, or was removed, is found no more.
    await memory.store.runs.put({ ...overdue[19]!, status: "timed_out", finished_at: at(0) });
    await memory.store.runs.deleteIfQueued(runId(18));
    expect((await memory.store.runs.listOverdue(NOW, 2)).map((run) => run.run_id)).toEqual([runId(17), runId(16)]);
    expect(await memory.store.runs.listActive()).toHaveLength(20);
  });
});
