import { makeRunSweeper } from "../../lambdas/runtime/aws/sweepRuns";
import { sweptRunsMetricLine } from "../../lambdas/runtime/aws/sweptRunsMetric";
import { functionItem, runItem } from "../helpers/records";
import { type MemoryStore, startMemoryStore } from "../helpers/memoryStore";

// The sweeper's metric: how many runs a scheduled sweep ended past their deadline, as the
// Embedded Metric Format line CloudWatch reads from its log (the stack alarms on it).

describe("the sweeper's runs-swept metric", () => {
  let memory: MemoryStore;
  beforeAll(async () => {
    memory = await startMemoryStore();
  });
  afterAll(() => memory?.close());

  it("is one EMF line: namespace browserfn, the stack as its dimension, the count", () => {
    expect(JSON.parse(sweptRunsMetricLine("bfn-prod", 3, new Date("2026-03-01T10:00:00.000Z")))).toEqual({
      _aws: {
        Timestamp: Date.parse("2026-03-01T10:00:00.000Z"),
        CloudWatchMetrics: [{ Namespace: "browserfn", Dimensions: [["Stack"]], Metrics: [{ Name: "RunsSweptPastDeadline", Unit: "Count" }] }],
      },
      Stack: "bfn-prod",
      RunsSweptPastDeadline: 3,
    });
  });

  it("reports each scheduled sweep's count of runs it ended, 0 included", async () => {
    const fn = functionItem({ function_id: "fn_sweep", account_id: "acct_sweep" });
    // Queued at 2026-01-01 with a 300 s timeout: long past its deadline by March.
    for (const runId of ["run_lost_1", "run_lost_2"]) await memory.store.runs.put(runItem(fn, { run_id: runId, status: "running", started_at: "2026-01-01T00:00:00.000Z" }));
    const reported: number[] = [];
    const sweeper = makeRunSweeper({ store: memory.store, clock: { now: () => new Date("2026-03-01T10:00:00.000Z") }, log: () => undefined, sweptRuns: (count) => void reported.push(count) });
    expect(await sweeper({ "detail-type": "Scheduled Event" })).toEqual({ settled: 2 });
    expect(await sweeper({ "detail-type": "Scheduled Event" })).toEqual({ settled: 0 });
    expect(reported).toEqual([2, 0]);
    expect(await memory.store.runs.get("run_lost_1")).toMatchObject({ status: "failed", error: { code: "function_crashed" } });
  });
});
