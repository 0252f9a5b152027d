import { expectError } from "../helpers/http";
import { startTestService, type TestService } from "../helpers/localService";
import { type PageServer, startPageServer } from "../helpers/pageServer";
import { browserPids as browserPidsOf, oldestFirst, workerPids as workerPidsOf } from "../helpers/sandboxProbes";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let t: TestService;
let pages: PageServer;
beforeAll(async () => {
  [t, pages] = await Promise.all([startTestService(), startPageServer()]);
});
afterAll(async () => {
  await t.destroy(); // asserts that no worker or browser is left
  await pages.close();
});

/** Waits until the function's latest run is running; returns its id. */
async function runningRun(name: string): Promise<string> {
  for (let i = 0; i < 400; i++) {
    const [latest] = (await t.call("GET", `/functions/${name}/logs?limit=1`)).body.items;
    if (latest?.status === "running") return latest.run_id;
    await sleep(25);
  }
  throw new Error(`no run of ${name} started`);
}


/** The service's worker processes (their command line names the bundle in the runtime dir). */
const workerPids = () => workerPidsOf(t.service.runtimeDir);

/** The main process of each browser of the service (not its renderers and helpers, which carry `--type=`). */
const browserPids = () => browserPidsOf(t.service.runtimeDir);

describe("processes killed from outside mid-run", () => {
  it("a worker killed mid-run fails that run as function_crashed; the next run gets a new worker", async () => {
    await t.deploy("victim", "export default async (wait: number = 3000) => { await new Promise((r) => setTimeout(r, wait)); return process.pid; }");
    const call = t.call("POST", "/functions/victim");
    const runId = await runningRun("victim");
    // The run's worker, not the standby started beside it (see standbyWorker.test): the older of the sandbox's two.
    const pids = oldestFirst(workerPids()).slice(0, 1);
    expect(pids).toHaveLength(1);
    process.kill(pids[0] as number, "SIGKILL");
    const response = await call;
    const error = expectError(response, 500, "function_crashed");
    expect(error.message).toMatch(/crashed.*SIGKILL/);
    const run = (await t.call("GET", `/runs/${runId}`)).body;
    expect(run).toMatchObject({ status: "failed", error: { code: "function_crashed" } });
    expect(run.finished_at).not.toBeNull();
    const again = await t.call("POST", "/functions/victim", { body: { wait: 0 } });
    expect(again.status).toBe(200);
    expect(again.body).not.toBe(pids[0]);
    expect(workerPids()).not.toContain(pids[0]);
  });

  it("Chromium killed mid-run fails that run as function_error; the sandbox stays and its next run gets a new browser", async () => {
    await t.deploy(
      "browsing",
      `import { Session } from "browserfn/runtime";
      export default async function run(url: string, wait: number = 0) {
        await using session = await Session.start();
        const page = await session.newPage();
        await page.goto(url);
        await new Promise((r) => setTimeout(r, wait));
        return { title: await page.title(), worker: process.pid };
      }`,
      { timeout_seconds: 60 },
    );
    const url = `${pages.url}/title/alive`;
    const warm = await t.call("POST", "/functions/browsing", { body: { url } });
    expect(warm.body.title).toBe("alive");
    const call = t.call("POST", "/functions/browsing", { body: { url, wait: 3000 } });
    const runId = await runningRun("browsing");
    await sleep(500); // past goto, into the wait
    const browsers = browserPids();
    expect(browsers).toHaveLength(1);
    process.kill(browsers[0] as number, "SIGKILL");
    const response = await call;
    // The automation's next page call fails (a detached frame): an error it did not catch.
    expectError(response, 500, "function_error");
    const failed = (await t.call("GET", `/runs/${runId}`)).body;
    expect(failed.status).toBe("failed");
    // The run's log says why its page went away.
    expect(failed.logs).toMatch(/^ERROR The browser exited \(SIGKILL: /m);
    const again = await t.call("POST", "/functions/browsing", { body: { url } });
    expect(again.status).toBe(200);
    expect(again.body.title).toBe("alive");
    // The sandbox is kept (each run gets a fresh worker process, issue #26), and its next session
    // gets a new browser.
    expect(again.body.worker).not.toBe(warm.body.worker);
    // After its answer the run's browser is replaced by a fresh one, started for the next run (a
    // browser start: seconds on a machine busy with other suites).
    for (let i = 0; i < 300 && browserPids().length !== 1; i++) await sleep(50);
    expect(browserPids()).toHaveLength(1);
    expect(browserPids()).not.toContain(browsers[0]);
    expect((await t.call("GET", "/health")).status).toBe(200);
  });
});

describe("big outputs", () => {
  // Just under the inline cap (3.5 MiB of JSON, what a route Lambda's 6 MiB answer always holds).
  it("a 3.4 MB result is answered whole and kept whole with the run", async () => {
    await t.deploy(
      "big-result",
      `import { randomBytes } from "node:crypto";
      export default async () => ({ data: randomBytes(2_550_000).toString("base64") });`,
    );
    const response = await t.call("POST", "/functions/big-result");
    expect(response.status).toBe(200);
    expect(response.body.data).toHaveLength(3_400_000);
    const run = (await t.call("GET", `/runs/${response.headers.get("x-run-id")}`)).body;
    expect(run.status).toBe("succeeded");
    expect(run.result.data).toBe(response.body.data);
  });

  it("50 MB of console output is cut to its first 64 KB in the run; the service is unharmed", async () => {
    await t.deploy(
      "chatty",
      `export default async () => {
        const line = "y".repeat(1024);
        for (let i = 0; i < 50 * 1024; i++) console.log(i, line);
        process.stdout.write("z".repeat(1024 * 1024));
        return "said it all";
      }`,
      { timeout_seconds: 120 },
    );
    const before = process.memoryUsage().rss;
    const response = await t.call("POST", "/functions/chatty");
    expect(response.status).toBe(200);
    expect(response.body).toBe("said it all");
    const run = (await t.call("GET", `/runs/${response.headers.get("x-run-id")}`)).body;
    expect(Buffer.byteLength(run.logs)).toBeLessThanOrEqual(64 * 1024);
    expect(run.logs.startsWith(`LOG 0 ${"y".repeat(1024)}\n`)).toBe(true);
    expect(run.logs.endsWith("…[output truncated]\n")).toBe(true);
    // The output never went through the service: its memory did not grow by anything like 50 MB.
    expect(process.memoryUsage().rss - before).toBeLessThan(40 * 1024 * 1024);
    expect((await t.call("POST", "/functions/victim", { body: { wait: 0 } })).status).toBe(200);
  });
});
