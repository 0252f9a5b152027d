/**
 * Issue #26: a deploy is read in the background (CpuShares.background: only CPU nothing else
 * wants), and a reading starved there (a machine kept busy by runs) goes on in the deploying
 * account's share instead of waiting out its budget. The starvation is real: the "background" here is a cpu
 * cgroup capped at 1 % of a core (cgroup v1, as root: CI, this machine), the reading a real
 * analysis thread compiling a module.
 */
import { mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { AnalysisPool } from "../../lambdas/code/analysis/analysisPool";
import { sourceWorkerScript } from "../../lambdas/code/analysis/analysisWorkerScript";
import { DEFAULT_ANALYSIS_BUDGET } from "../../lambdas/code/analysis/codeAnalysis";
import { CgroupCpuShares } from "../../lambdas/runtime/local/cpuShares/cgroupCpuShares";
import type { CpuShares } from "../../lambdas/runtime/local/cpuShares/cpuShares";

const STARVED = `/sys/fs/cgroup/cpu/browserfn-test-starved-${process.pid}`;

/** Moves threads into a group that gets 1 % of a core ("background"), and back to the root group for a charge, saying what it did. */
function starvingShares(moves: string[]): CpuShares {
  return {
    kind: "cgroup",
    place: async () => async () => undefined,
    async charge(accountId, threadId) {
      moves.push(`charge ${accountId}`);
      writeFileSync("/sys/fs/cgroup/cpu/tasks", String(threadId));
      return async () => void moves.push(`release ${accountId}`);
    },
    async background(threadId) {
      moves.push("background");
      writeFileSync(`${STARVED}/tasks`, String(threadId));
    },
  };
}

describe("a deploy's reading in the background", () => {
  let available = false;
  beforeAll(async () => {
    available = await CgroupCpuShares.available();
    if (!available) return;
    mkdirSync(STARVED, { recursive: true });
    writeFileSync(`${STARVED}/cpu.cfs_period_us`, "100000");
    writeFileSync(`${STARVED}/cpu.cfs_quota_us`, "1000");
  });
  afterAll(async () => {
    if (!available) return;
    // Its thread may still be exiting (the pool closed just now): tried a little longer.
    for (let attempt = 0; ; attempt++) {
      try {
        return rmdirSync(STARVED);
      } catch (error) {
        if (attempt >= 50) throw error;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  });

  it("goes on in the account's share when the background gives it too little CPU, and is read in full", async () => {
    if (!available) return; // no cgroups to starve a thread in: nothing to show here
    const moves: string[] = [];
    const pool = new AnalysisPool({ script: sourceWorkerScript(), budget: DEFAULT_ANALYSIS_BUDGET, maxWorkers: 1, log: () => undefined });
    try {
      // The compiler loaded (its first deploy), where nothing starves it.
      await pool.compile("export default async () => 1;", "acct");
      pool.inBackground(starvingShares(moves));
      const started = Date.now();
      // Enough to read that at 1 % of a core it would take far more than the first second (some 100 ms of CPU).
      const lines = Array.from({ length: 3000 }, (_, i) => `const v${i}: { a: number; b: string } = { a: ${i}, b: "${i}" };`).join("\n");
      const compiled = await pool.compile(`${lines}\nexport default async (url: string, n: number = 2) => ({ url, n, last: v2999.a });`, "acct");
      expect(compiled.variables.map((variable) => variable.name)).toEqual(["url", "n"]);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(moves).toEqual(["background", "charge acct", "release acct"]);
      // At 1 % of a core it would have taken its 30 s (six times its budget) and failed.
      expect(Date.now() - started).toBeLessThan(20_000);
      expect(readFileSync(`${STARVED}/tasks`, "utf8").trim()).toBe("");
    } finally {
      await pool.close();
    }
  }, 60_000);
});
