import { settleInterruptedRuns } from "../../lambdas/local/settleInterruptedRuns";
import type { RunItem } from "../../lambdas/runs/types";
import { startMemoryStore } from "../helpers/memoryStore";
import { functionItem, runItem } from "../helpers/records";

const NOW = new Date("2026-11-22T12:00:00.000Z");
const LIMITS = { concurrency: 10, invocationsPerMonth: 100 };

function run(runId: string, status: RunItem["status"]): RunItem {
  return runItem(functionItem(), {
    run_id: runId,
    status,
    queued_at: NOW.toISOString(),
    started_at: status === "running" ? NOW.toISOString() : null,
  });
}

describe("settling the runs a stopped service left behind", () => {
  it("removes never-admitted queued runs, fails the others as crashed, counts them and gives their leases back", async () => {
    const memory = await startMemoryStore();
    const { store } = memory;
    try {
      const neverAdmitted = run("run_never", "queued");
      const coldStart = run("run_cold", "queued");
      const running = run("run_running", "running");
      const ended = { ...run("run_ended", "succeeded"), finished_at: NOW.toISOString(), duration_ms: 5 };
      for (const item of [neverAdmitted, coldStart, running, ended]) await store.runs.put(item);
      for (const admitted of [coldStart, running]) await store.limits.admit("acct", admitted.run_id, LIMITS, NOW.getTime() + 600_000, NOW);

      expect(await settleInterruptedRuns(store, { now: () => NOW })).toBe(2);

      expect(await store.runs.get(neverAdmitted.run_id)).toBeUndefined();
      for (const settled of [coldStart, running]) {
        expect(await store.runs.get(settled.run_id)).toMatchObject({ status: "failed", error: { code: "function_crashed" }, finished_at: NOW.toISOString() });
      }
      expect(await store.runs.get(ended.run_id)).toEqual(ended);
      expect(await store.limits.current("acct", NOW)).toEqual({ invocations: 2, inFlight: 0 });
      expect((await store.meters.functionCounters(running.function_id)).failed).toBe(2);
      expect(await store.runs.listActive()).toEqual([]);
    } finally {
      await memory.close();
    }
  });
});
