/**
 * Issue #26: a deploy is read in the background (CpuShares.background: only CPU nothing else
 * wants), and a reading starved there (a machine kept busy by runs) goes on in the deploying
 * account's share instead of waiting out its budget. The starvation is real: the "background" here is a cpu
 * cgroup capped at 1 % of a core (cgroup v1, as root: CI, this machine), the reading a real
 * analysis thread compiling a module.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
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

describe("a reading's thread that ends", () => {
  it("is forgotten by the CPU shares once its worker leaves the pool (the kernel may give its id to another thread)", async () => {
    const backgrounded = new Set<number>();
    const forgotten: number[] = [];
    const shares: CpuShares = {
      kind: "cgroup",
      place: async () => async () => undefined,
      charge: async () => async () => undefined,
      background: async (threadId) => void backgrounded.add(threadId),
      forget: (threadId) => void forgotten.push(threadId),
    };
    // Two workers (two accounts' deploys at once); an idle one beyond the first leaves after 50 ms.
    const pool = new AnalysisPool({ script: sourceWorkerScript(), budget: DEFAULT_ANALYSIS_BUDGET, maxWorkers: 2, idleMs: 50, log: () => undefined });
    try {
      pool.inBackground(shares);
      await Promise.all([pool.compile("export default async () => 1;", "a"), pool.compile("export default async () => 2;", "b")]);
      expect(backgrounded.size).toBeGreaterThan(0);
      for (let i = 0; i < 100 && forgotten.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(pool.size.workers).toBe(1);
      expect(forgotten).toHaveLength(1);
      // The id forgotten is the ended worker's: no thread of this process has it once it is gone.
      const gone = `/proc/self/task/${forgotten[0]}`;
      for (let i = 0; i < 100 && existsSync(gone); i++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(existsSync(gone)).toBe(false);
    } finally {
      await pool.close();
    }
  }, 60_000);
});
