import { readFileSync } from "node:fs";
import { startTestService, type TestService } from "../helpers/localService";
import { oldestFirst, workerPids } from "../helpers/sandboxProbes";

// A sandbox starts the next run's worker process while a run runs (its standby), so a run's
// answer finds its successor started (docs/local.md, "What worker code can do"; issue #27).

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** How long its process had been up when the run began, and its pid. */
const UPTIME = "export default async (ms: number = 0) => { const up = process.uptime(); await new Promise((r) => setTimeout(r, ms)); return { up, pid: process.pid }; };";

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t.destroy(); // asserts that no worker or browser is left
});

const stateOf = (pid: number) => readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0];

describe("the standby worker", () => {
  it("is started while a run runs: the next run's process was up before the answer, and no process serves two runs", async () => {
    await t.deploy("uptime", UPTIME);
    expect((await t.call("POST", "/functions/uptime")).status).toBe(200); // the sandbox started
    const first = await t.call("POST", "/functions/uptime", { body: { ms: 1500 } });
    const second = await t.call("POST", "/functions/uptime");
    const third = await t.call("POST", "/functions/uptime");
    expect([first.status, second.status, third.status]).toEqual([200, 200, 200]);
    // Started beside the first run (before: only once it had answered, so up well under 1.5 s).
    expect(second.body.up).toBeGreaterThan(1.2);
    expect(new Set([first.body.pid, second.body.pid, third.body.pid]).size).toBe(3);
  }, 60_000);

  it("is frozen with the rest of an idle sandbox once it is ready", async () => {
    await t.deploy("idler", UPTIME);
    expect((await t.call("POST", "/functions/idler")).status).toBe(200);
    let states: (string | undefined)[] = [];
    for (let i = 0; i < 100; i++) {
      states = workerPids(t.service.runtimeDir).map(stateOf);
      if (states.length === 2 * t.service.workers().processes && states.every((state) => state === "T")) break;
      await sleep(100);
    }
    // Each sandbox: its current worker and its standby, both stopped.
    expect(states.length).toBe(2 * t.service.workers().processes);
    expect(states.every((state) => state === "T")).toBe(true);
  }, 60_000);

  it("killed during a run loses no run: that run answers, and the next one gets a fresh process", async () => {
    await t.deploy("survivor", UPTIME);
    expect((await t.call("POST", "/functions/survivor")).status).toBe(200);
    const before = new Set(workerPids(t.service.runtimeDir));
    const running = t.call("POST", "/functions/survivor", { body: { ms: 2000 } });
    let standby: number | undefined;
    for (let i = 0; i < 100 && standby === undefined; i++) {
      await sleep(50);
      // The run's worker was the standby of the call before (or, had it not been ready, a process
      // started for it); the run's own standby is the newest process started since the run began.
      const fresh = oldestFirst(workerPids(t.service.runtimeDir).filter((pid) => !before.has(pid)));
      const running = fresh.length === 1 ? [...before].filter((pid) => workerPids(t.service.runtimeDir).includes(pid)) : [];
      if (fresh.length === 2 || (fresh.length === 1 && running.length > 0)) standby = fresh[fresh.length - 1];
    }
    expect(standby).toBeDefined();
    process.kill(standby as number, "SIGKILL");
    const answered = await running;
    expect(answered.status).toBe(200);
    expect(answered.body.pid).not.toBe(standby);
    const next = await t.call("POST", "/functions/survivor");
    expect(next.status).toBe(200);
    expect(next.body.pid).not.toBe(answered.body.pid);
  }, 60_000);
});
