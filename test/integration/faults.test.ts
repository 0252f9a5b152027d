import { expectError } from "../helpers/http";
import { startTestService, type TestService } from "../helpers/localService";
import { type PageServer, startPageServer } from "../helpers/pageServer";

let t: TestService;
let pages: PageServer;
beforeAll(async () => {
  [t, pages] = await Promise.all([startTestService(), startPageServer()]);
});
afterAll(async () => {
  await t.destroy();
  await pages.close();
});


async function lastRun(name: string) {
  const [entry] = (await t.call("GET", `/functions/${name}/logs?limit=1`)).body.items;
  return (await t.call("GET", `/runs/${entry.run_id}`)).body;
}

describe("user code that misbehaves", () => {
  it.each([
    ["hang", "export default async () => { await new Promise(() => {}); }"],
    ["busy", "export default async () => { for (;;) {} }"],
  ])("%s: past its timeout the worker is killed and the run timed out (504)", async (name, code) => {
    await t.deploy(name, code, { timeout_seconds: 1 });
    const before = t.service.workers();
    const response = await t.call("POST", `/functions/${name}`);
    const error = expectError(response, 504, "function_timeout");
    expect(error.details.run_id).toBe(response.headers.get("x-run-id"));
    const run = await lastRun(name);
    expect(run).toMatchObject({ status: "timed_out", error: { code: "function_timeout" } });
    expect(run.duration_ms).toBeGreaterThanOrEqual(1000);
    expect(run.duration_ms).toBeLessThan(5000);
    // Nothing of the run is left busy: a hanging run's worker process is replaced in its sandbox
    // (a fresh process, idle), a busy one's sandbox is killed; either way no busy worker remains.
    const busy = (size: { processes: number; idle: number }) => size.processes - size.idle;
    // (A hanging run's fresh process starts in a moment, seconds on a machine busy with other suites.)
    for (let i = 0; i < 300 && busy(t.service.workers()) !== busy(before); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(busy(t.service.workers())).toBe(busy(before));
    expect((await t.call("GET", "/health")).status).toBe(200);
  });

  it("a run that times out or crashes keeps what it logged until then", async () => {
    await t.deploy(
      "talks-then-stops",
      `export default async function run(crash: boolean = false) {
        console.log("step 1 of 2");
        console.error("about to", crash ? "crash" : "hang");
        await new Promise((r) => setTimeout(r, 100));
        if (crash) process.exit(3);
        await new Promise(() => {});
      }`,
      { timeout_seconds: 2 },
    );
    const hung = await t.call("POST", "/functions/talks-then-stops");
    expectError(hung, 504, "function_timeout");
    expect((await t.call("GET", `/runs/${hung.headers.get("x-run-id")}`)).body.logs).toBe("LOG step 1 of 2\nERROR about to hang\n");
    const crashed = await t.call("POST", "/functions/talks-then-stops", { body: { crash: true } });
    expectError(crashed, 500, "function_crashed");
    expect((await t.call("GET", `/runs/${crashed.headers.get("x-run-id")}`)).body.logs).toBe("LOG step 1 of 2\nERROR about to crash\n");
  });

  it("memory hog: killed above memory_mb as function_crashed, and the service keeps serving", async () => {
    await t.deploy(
      "hog",
      `export default async () => { const keep = []; for (let i = 0; i < 200; i++) { keep.push(Buffer.alloc(16 * 1024 * 1024, 1)); await new Promise((r) => setTimeout(r, 5)); } return keep.length; }`,
      { memory_mb: 512, timeout_seconds: 60 },
    );
    const idleBefore = t.service.workers().idle;
    const error = expectError(await t.call("POST", "/functions/hog"), 500, "function_crashed");
    expect(error.message).toMatch(/out of memory.*limit is 512 MB/);
    expect(t.service.workers().idle).toBe(idleBefore);
    expect((await lastRun("hog")).status).toBe("failed");
    await t.deploy("after-hog", "export default async () => 'still here';");
    expect((await t.call("POST", "/functions/after-hog")).body).toBe("still here");
  });

  it("keeps the lines a run logged in the same moment as its process.exit() or a loop that never yields", async () => {
    await t.deploy(
      "talks-then-dies",
      `export default async (spin: boolean = false) => {
        console.log("first words");
        console.error("last words");
        if (spin) for (;;) {}
        process.exit(3);
      }`,
      { timeout_seconds: 2 },
    );
    const crashed = await t.call("POST", "/functions/talks-then-dies");
    expectError(crashed, 500, "function_crashed");
    expect((await t.call("GET", `/runs/${crashed.headers.get("x-run-id")}`)).body.logs).toBe("LOG first words\nERROR last words\n");
    const spun = await t.call("POST", "/functions/talks-then-dies", { body: { spin: true } });
    expectError(spun, 504, "function_timeout");
    expect((await t.call("GET", `/runs/${spun.headers.get("x-run-id")}`)).body.logs).toMatch(/^LOG first words\nERROR last words\n/);
  });

  it("process.exit() in user code: the run is recorded as failed and the next run gets a new worker", async () => {
    await t.deploy("quitter", "export default async (quit: boolean = true) => { if (quit) process.exit(3); return process.pid; }");
    const error = expectError(await t.call("POST", "/functions/quitter"), 500, "function_crashed");
    expect(error.message).toMatch(/exited/);
    expect((await lastRun("quitter")).status).toBe("failed");
    const again = await t.call("POST", "/functions/quitter", { body: { quit: false } });
    expect(again.status).toBe(200);
  });

  it("a result that is not JSON answers result_not_serializable", async () => {
    await t.deploy("bigint", "export default async () => ({ n: 10n });");
    expectError(await t.call("POST", "/functions/bigint"), 500, "result_not_serializable");
  });
});

describe("isolation", () => {
  it("two sessions in one run share no cookies, and a later run on the same warm sandbox sees none", async () => {
    await t.deploy(
      "cookies",
      `import { Session } from "browserfn/runtime";
      export default async function run(base: string, set: boolean) {
        await using a = await Session.start();
        const pa = await a.newPage();
        if (set) await pa.goto(base + "/set-cookie/seen");
        await pa.goto(base + "/cookies");
        await using b = await Session.start();
        const pb = await b.newPage();
        await pb.goto(base + "/cookies");
        return { a: await pa.title(), b: await pb.title(), pid: process.pid };
      }`,
    );
    const first = (await t.call("POST", "/functions/cookies", { body: { base: pages.url, set: true } })).body;
    expect(first.a).toBe("cookies:seen=1");
    expect(first.b).toBe("cookies:");
    const second = (await t.call("POST", "/functions/cookies", { body: { base: pages.url, set: false } })).body;
    expect(second.pid).not.toBe(first.pid); // the same warm sandbox, a fresh worker process and browser (issue #26)
    expect(second.a).toBe("cookies:");
    expect(second.b).toBe("cookies:");
  });

  it("user code cannot read the data dir, write files, start processes or see the service's environment", async () => {
    process.env.BROWSERFN_TEST_SECRET = "do-not-leak";
    await t.deploy(
      "escape",
      `import fs from "node:fs";
      import cp from "node:child_process";
      const attempt = (f: () => unknown) => { try { return { ok: true, value: String(f()).slice(0, 200) }; } catch (e) { return { ok: false, error: String((e as Error).code ?? e) }; } };
      export default async (dataDir: string) => ({
        readKey: attempt(() => fs.readFileSync(dataDir + "/bootstrap-key", "utf8")),
        listData: attempt(() => fs.readdirSync(dataDir)),
        write: attempt(() => fs.writeFileSync("/tmp/browserfn-escape-test", "x")),
        spawn: attempt(() => cp.execSync("id")),
        env: Object.keys(process.env),
      });`,
    );
    const result = (await t.call("POST", "/functions/escape", { body: { dataDir: t.dataDir } })).body;
    expect(result.readKey.ok).toBe(false);
    expect(result.listData.ok).toBe(false);
    expect(result.write.ok).toBe(false);
    expect(result.spawn.ok).toBe(false);
    expect(result.env).toEqual([]);
    expect(JSON.stringify(result)).not.toContain("do-not-leak");
    delete process.env.BROWSERFN_TEST_SECRET;
  });
});

describe("stopping", () => {
  it("a deleted function's busy worker is not kept warm, and stopping mid-run leaves no process", async () => {
    const own = await startTestService();
    try {
      await own.call("POST", "/functions", {
        body: { name: "slowpoke", code: "export default async () => { await new Promise((r) => setTimeout(r, 800)); return 1; }" },
      });
      const running = own.call("POST", "/functions/slowpoke");
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await own.call("DELETE", "/functions/slowpoke")).status).toBe(204);
      await running;
      expect(own.service.workers().idle).toBe(0);

      await own.call("POST", "/functions", {
        body: { name: "sleeper", code: "export default async () => { await new Promise((r) => setTimeout(r, 60000)); }" },
      });
      const accepted = await own.call("POST", "/functions/sleeper", { headers: { prefer: "respond-async" } });
      expect(accepted.status).toBe(202);
      await new Promise((resolve) => setTimeout(resolve, 300));
    } finally {
      await own.destroy(); // asserts that no worker or browser of this service is left
    }
  });
});

describe("capacity and the sync window", () => {
  it("answers 202 when a run outlasts the sync window, and queues (202 queued, machine_busy) a run no worker frees up for", async () => {
    const small = await startTestService({ config: { syncWaitSeconds: 1, workers: { perFunction: 1, total: 1, idleSeconds: 60 } } });
    try {
      await small.call("POST", "/functions", {
        body: { name: "slow", code: "export default async () => { await new Promise((r) => setTimeout(r, 2500)); return 'done'; }" },
      });
      const [first, second] = await Promise.all([small.call("POST", "/functions/slow"), small.call("POST", "/functions/slow")]);
      expect([first.status, second.status]).toEqual([202, 202]);
      const waiting = first.body.status === "queued" ? first : second;
      expect(waiting.body.status).toBe("queued");
      expect((await small.call("GET", `/runs/${waiting.body.run_id}`)).body).toMatchObject({ status: "queued", queue_reason: "machine_busy" });
      // The first's worker starts cold, the second waits for its fresh process: seconds more each on a busy machine.
      for (const accepted of [first, second]) {
        let run = (await small.call("GET", `/runs/${accepted.body.run_id}`)).body;
        for (let i = 0; i < 300 && run.status !== "succeeded"; i++) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          run = (await small.call("GET", `/runs/${accepted.body.run_id}`)).body;
        }
        expect(run).toMatchObject({ status: "succeeded", result: "done" });
      }
      expect((await small.call("GET", "/functions/slow/logs")).body.items).toHaveLength(2);
    } finally {
      await small.destroy();
    }
    // A service of its own, a cold worker and two 2.5 s runs one after the other: past jest's 30 s on a busy machine.
  }, 90_000);
});
