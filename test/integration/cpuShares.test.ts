/**
 * Issue #26: a hostile account burning CPU in many runs does not starve another account's run.
 * Each account's sandboxes (every process of them) weigh together as one: a cgroup v1 `cpu`
 * group per account with equal `cpu.shares` where the service runs as root (CI, this machine),
 * else nice levels by the account's load. And a run's huge result is parsed on the service's
 * result-parsing thread, not the thread that serves requests. Asserted on the kernel's settings
 * and on which thread parsed, never on timing.
 */
import { threadId } from "node:worker_threads";
import { readdirSync, readFileSync } from "node:fs";
import { getPriority } from "node:os";
import { ACCOUNT_SHARES, cpuGroupAt, SANDBOXES_SHARES } from "../../lambdas/runtime/local/cpuShares/cgroupCpuShares";
import { SANDBOX_NICE, niceForLoad } from "../../lambdas/runtime/local/cpuShares/cpuShares";
import { startTestService, type TestService } from "../helpers/localService";
import { processesWith } from "../helpers/processes";

const BURN = `export default async (ms: number = 4000) => {
  const end = Date.now() + ms;
  let spins = 0;
  while (Date.now() < end) spins++;
  return { spins };
}`;

/** A result of `items` small objects (about 50 bytes each) and the function's secret. */
const BIG = `import { secrets } from "browserfn/runtime";
export default async (items: number = 1) => ({ items: Array.from({ length: items }, (_, i) => ({ i, name: "item-" + i })), token: secrets.get("TOKEN") });`;

const CPU = "/sys/fs/cgroup/cpu/browserfn";
const MEMORY = "/sys/fs/cgroup/memory/browserfn";

/** The cpu cgroup of a process, as /proc/<pid>/cgroup names it (undefined once it is gone). */
function cpuGroupOf(pid: number): string | undefined {
  return cpuGroupAt(`/proc/${pid}`);
}

const read = (file: string) => readFileSync(file, "utf8").trim();
const pidsIn = (dir: string) => read(`${dir}/cgroup.procs`).split("\n").filter(Boolean).map(Number);
/** This process's services' groups (by name: `<pid>-…`). */
const ownGroups = (root: string) => readdirSync(root, { withFileTypes: true }).filter((entry) => entry.isDirectory() && entry.name.startsWith(`${process.pid}-`)).map((entry) => entry.name);

async function whenRunning(t: TestService, token: string, runId: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const { status } = (await t.call("GET", `/runs/${runId}`, { token })).body as { status: string };
    if (status === "running") return;
    if (status !== "queued") throw new Error(`run ${runId} is ${status}, not running`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`run ${runId} did not start`);
}

describe("CPU shares between accounts", () => {
  let t: TestService;
  let destroyed = false;
  beforeAll(async () => {
    t = await startTestService({ config: { workers: { perFunction: 3, total: 4, idleSeconds: 60 } } });
  });
  afterAll(async () => {
    if (t && !destroyed) await t.destroy();
  });

  it("parses a run's huge result (and redacts its secret) and gzips it for the store on the result-parsing thread, and a small one on the request thread", async () => {
    const key = await t.newAccount("big-results", "pro");
    await t.deploy("big", BIG, {}, key);
    expect((await t.call("PUT", "/functions/big/secrets/TOKEN", { token: key, body: { value: "s3cr3t-value-42" } })).status).toBeLessThan(300);
    const before = t.service.resultParsing();
    const small = await t.call("POST", "/functions/big", { token: key, body: { items: 3 } });
    expect(small.status).toBe(200);
    expect(t.service.resultParsing().parsed).toBe(before.parsed);
    const big = await t.call("POST", "/functions/big", { token: key, body: { items: 60_000 } });
    expect(big.status).toBe(200);
    expect(big.text.length).toBeGreaterThan(1024 * 1024);
    expect(big.text).not.toContain("s3cr3t-value-42");
    expect((big.body as { token: string }).token).toBe("[secret]");
    const after = t.service.resultParsing();
    expect(after.parsed).toBe(before.parsed + 1);
    // Gzipped for the store there too (the small one stays inline in the run's item), and read back whole.
    expect(after.gzipped).toBe(before.gzipped + 1);
    const stored = await t.call("GET", `/runs/${big.headers.get("x-run-id")}`, { token: key });
    expect(stored.body.result).toEqual(big.body);
    expect(after.threadId).toBeGreaterThan(0);
    expect(after.threadId).not.toBe(threadId);
    if (t.service.sandbox.cpuShares === "cgroup") {
      // That work counted against the account's own CPU share, as its runs do: the thread did the
      // job (the gzip, the last) in the account's group, not in the service's.
      expect(after.cpuGroup).toMatch(new RegExp(`^/browserfn/${process.pid}-\\d+-big_results-[0-9a-f]{12}$`));
      // And went back to the service's own group once nothing waited: no thread of the service is left in an account's.
      const inAccountGroups = () => readdirSync("/proc/self/task").filter((tid) => /:\/browserfn\//.test(readFileSync(`/proc/self/task/${tid}/cgroup`, "utf8")));
      for (let i = 0; i < 100 && inAccountGroups().length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(inAccountGroups()).toEqual([]);
    }
  }, 60_000);

  it("weighs three busy runs of one account together as much as another account's one run", async () => {
    const hostileKey = await t.newAccount("cpu-hog", "pro");
    const otherKey = await t.newAccount("cpu-neighbour", "pro");
    await t.deploy("burn", BURN, { timeout_seconds: 60 }, hostileKey);
    await t.deploy("burn", BURN, { timeout_seconds: 60 }, otherKey);
    const start = async (token: string, ms: number) => {
      const answer = await t.call("POST", "/functions/burn", { token, body: { ms }, headers: { prefer: "respond-async" } });
      expect(answer.status).toBe(202);
      return String(answer.body.run_id);
    };
    const hostileRuns = [await start(hostileKey, 8000), await start(hostileKey, 8000), await start(hostileKey, 8000)];
    const otherRun = await start(otherKey, 8000);
    for (const runId of hostileRuns) await whenRunning(t, hostileKey, runId);
    await whenRunning(t, otherKey, otherRun);

    if (t.service.sandbox.cpuShares === "cgroup") {
      // One group per account, no more (three sandboxes of one account share one), each weighing the same.
      const groups = ownGroups(CPU);
      expect(groups).toHaveLength(2);
      for (const group of groups) expect(Number(read(`${CPU}/${group}/cpu.shares`))).toBe(ACCOUNT_SHARES);
      // Named for the account (its id, here its name, with `-` made `_`, and a hash of it).
      const hogGroup = groups.find((group) => group.includes("-cpu_hog-"));
      const neighbourGroup = groups.find((group) => group.includes("-cpu_neighbour-"));
      expect(hogGroup).toBeDefined();
      expect(neighbourGroup).toBeDefined();
      // Every process of every sandbox (its memory group lists them all) is in its account's cpu group.
      const sandboxesBy = new Map<string, number>();
      for (const sandbox of ownGroups(MEMORY)) {
        const pids = pidsIn(`${MEMORY}/${sandbox}`);
        expect(pids.length).toBeGreaterThan(0);
        const cpuGroups = new Set(pids.map(cpuGroupOf).filter((group) => group !== undefined));
        expect(cpuGroups.size).toBe(1);
        const group = [...cpuGroups][0] as string;
        sandboxesBy.set(group, (sandboxesBy.get(group) ?? 0) + 1);
      }
      expect(Object.fromEntries(sandboxesBy)).toEqual({ [`/browserfn/${hogGroup}`]: 3, [`/browserfn/${neighbourGroup}`]: 1 });
      // browserfn/, every account's code together, weighs as one task: the service's own threads and its store come first under contention.
      expect(Number(read(`${CPU}/cpu.shares`))).toBe(SANDBOXES_SHARES);
    } else {
      // Nice levels by load, above SANDBOX_NICE: the account with three sandboxes has one at the level of three, the other none above the base.
      const levels = processesWith(t.service.runtimeDir).map((pid) => {
        try {
          return getPriority(pid);
        } catch {
          return 0;
        }
      });
      expect(Math.max(...levels)).toBe(SANDBOX_NICE + niceForLoad(3));
      expect(levels.filter((level) => level === SANDBOX_NICE).length).toBeGreaterThan(0);
    }
    for (const runId of [...hostileRuns, otherRun]) await t.call("POST", `/runs/${runId}/cancel`, { token: runId === otherRun ? otherKey : hostileKey });
    destroyed = true;
    await t.destroy();
    // Each account's group goes with its last sandbox.
    if (t.service.sandbox.cpuShares === "cgroup") expect(ownGroups(CPU)).toEqual([]);
  }, 120_000);
});
