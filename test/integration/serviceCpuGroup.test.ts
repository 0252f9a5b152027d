/**
 * Issue #26: the service's own work and its store weigh as the service, and what it does for an
 * account counts against that account's CPU share. The service as `npm start` runs it (its own
 * process), as root with cgroup v1's cpu controller (CI, this machine):
 * - the service's process and its store (dynalite) are in `browserfn-service`, not in the
 *   session's autogroup, where they weighed together as one task against every account's code;
 * - a sandbox's network helper (slirp4netns, which the service starts) is in the account's group;
 * - a deploy's reading (an analysis thread of the service) is background work: its thread is in
 *   `browserfn-background`, a group marked `cpu.idle`, which gets only CPU nothing else wants,
 *   and a cpuset of the same name, every CPU but the first: one core is never taken by a reading.
 * Asserted on the kernel's view of each process and thread, never on timing. Elsewhere (not root,
 * no cgroup v1) the service weighs as before and the test checks only that it serves.
 */
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { generateApiKey } from "../../lambdas/identity/apiKeys";
import { BACKGROUND_GROUP, backgroundCpus, CgroupCpuShares, cpuGroupAt, cpuList, SERVICE_GROUP, SERVICE_SHARES } from "../../lambdas/runtime/local/cpuShares/cgroupCpuShares";
import { type ChildService, startChildService } from "../helpers/childService";
import { slowToParse } from "../helpers/hostileCode";
import { requestJson } from "../helpers/http";

const SLEEPER = "export default async (ms: number = 4000) => { await new Promise((resolve) => setTimeout(resolve, ms)); return { ms }; };";

/** The processes whose parent is `parent`, with their command name. */
function childrenOf(parent: number): { pid: number; comm: string; cmdline: string }[] {
  const found: { pid: number; comm: string; cmdline: string }[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = readFileSync(`/proc/${entry}/status`, "utf8");
      if (Number(/^PPid:\s+(\d+)$/m.exec(status)?.[1]) !== parent) continue;
      found.push({ pid: Number(entry), comm: /^Name:\s+(.*)$/m.exec(status)?.[1] ?? "", cmdline: readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " ") });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** The cpu groups of the threads of `pid` that are not in `except`. */
function threadGroups(pid: number, except: string): string[] {
  const groups: string[] = [];
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const group = cpuGroupAt(`/proc/${pid}/task/${tid}`);
    if (group !== undefined && group !== except) groups.push(group);
  }
  return groups;
}

/** The threads of `pid` in cpu group `group`. */
function threadsIn(pid: number, group: string): number[] {
  return readdirSync(`/proc/${pid}/task`)
    .filter((tid) => cpuGroupAt(`/proc/${pid}/task/${tid}`) === group)
    .map(Number);
}

/** The CPUs a thread may run on, as a comma list of single CPUs ("1,2,3"; undefined once it is gone). */
function cpusAllowed(procPath: string): string | undefined {
  try {
    const list = /^Cpus_allowed_list:\s+(.*)$/m.exec(readFileSync(`${procPath}/status`, "utf8"))?.[1];
    return list === undefined ? undefined : cpuList(list).join(",");
  } catch {
    return undefined;
  }
}

async function until<T>(what: string, probe: () => T | undefined, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`${what}: not seen in ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("the service's own CPU group", () => {
  let dataDir: string;
  let service: ChildService;
  let adminKey: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "browserfn-service-cpu-"));
    adminKey = generateApiKey();
    // The local network refused (the default): each sandbox gets its slirp4netns.
    service = await startChildService(dataDir, adminKey);
  }, 120_000);
  afterAll(async () => {
    await service?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  const call = (method: string, urlPath: string, token: string, body?: unknown) => requestJson(service.url, method, urlPath, { token, ...(body === undefined ? {} : { body }) });
  const account = async (name: string) => String((await call("POST", "/api-keys", adminKey, { account: name, plan: "pro" })).body.key);

  it("holds the service and its store, puts the account's network helper in the account's group, and reads deploys in the background", async () => {
    const pid = service.child.pid as number;
    const runner = await account("cpu-runner");
    expect((await call("POST", "/functions", runner, { name: "sleeper", code: SLEEPER })).status).toBe(201);
    if (!(await CgroupCpuShares.available())) {
      // No cgroups here: the service weighs as it did, and serves.
      expect((await call("POST", "/functions/sleeper", runner, { ms: 10 })).status).toBe(200);
      return;
    }
    expect(cpuGroupAt(`/proc/${pid}`)).toBe(`/${SERVICE_GROUP}`);
    expect(Number(readFileSync(`/sys/fs/cgroup/cpu/${SERVICE_GROUP}/cpu.shares`, "utf8"))).toBe(SERVICE_SHARES);
    const dynalite = childrenOf(pid).find((child) => child.cmdline.includes("dynaliteChild"));
    expect(dynalite).toBeDefined();
    expect(cpuGroupAt(`/proc/${dynalite?.pid}`)).toBe(`/${SERVICE_GROUP}`);

    // A run's sandbox (it stays, warm, after the run): its slirp4netns is in the account's group, as the sandbox is.
    const started = await call("POST", "/functions/sleeper", runner, { ms: 100 });
    const sandboxGroup = (name: string) => new RegExp(`^/browserfn/${pid}-\\d+-${name}-[0-9a-f]{12}$`);
    const slirp = await until("the sandbox's slirp4netns", () => childrenOf(pid).find((child) => child.comm === "slirp4netns"));
    expect(started.status).toBe(200);
    expect(cpuGroupAt(`/proc/${slirp.pid}`)).toMatch(sandboxGroup("cpu_runner"));

    // A deploy whose reading takes its whole budget: read by a thread in the background group.
    const reader = await account("cpu-reader");
    const deploying = call("POST", "/functions", reader, { name: "bomb", code: slowToParse() });
    const readerThread = await until("a thread of the service in the background group", () => threadsIn(pid, `/${BACKGROUND_GROUP}`)[0]);
    expect(readFileSync(`/sys/fs/cgroup/cpu/${BACKGROUND_GROUP}/cpu.idle`, "utf8").trim()).toBe("1");
    // On a machine of two CPUs or more, never on the first: one core stays free of background work.
    const machineCpus = readFileSync("/sys/fs/cgroup/cpuset/cpuset.effective_cpus", "utf8").trim();
    const expected = backgroundCpus(machineCpus);
    if (expected !== undefined) {
      expect(expected.split(",").map(Number)).not.toContain(cpuList(machineCpus)[0]);
      await until("the reading's thread off the first CPU", () => (cpusAllowed(`/proc/${pid}/task/${readerThread}`) === expected ? true : undefined), 5_000);
    }
    const answer = await deploying;
    expect(answer.status).toBe(400);
    expect((answer.body.error as { code: string }).code).toBe("invalid_code");
    // No thread of the service is left in an account's group (a reading starved on a busy machine goes on in its account's, and back after).
    const inAccountGroups = () => threadGroups(pid, `/${SERVICE_GROUP}`).filter((group) => group.startsWith("/browserfn/"));
    await until("no thread of the service left in an account's group", () => (inAccountGroups().length === 0 ? true : undefined), 5_000);
  }, 120_000);
});
