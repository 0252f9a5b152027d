/**
 * The attacks of issue #12, each tried by a hostile automation against a real service, in
 * both sandbox modes (namespaces and process). Each failed against the service before the
 * sandbox: see docs/reliability.md, "Hostile automations".
 */
import { createHash } from "node:crypto";
import { chmodSync, existsSync, readdirSync, writeFileSync } from "node:fs";
import { generateApiKey } from "../../lambdas/identity/apiKeys";
import { expectError } from "../helpers/http";
import { startTestService, type TestService } from "../helpers/localService";
import { isAlive } from "../helpers/processes";
import { FILE_READER, browserPids, cmdline, cpuMs, listeningSockets, sandboxPids, workerPids } from "../helpers/sandboxProbes";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
// Each attack starts fresh workers and browsers (the profile reader one per profile it tries):
// on a CI machine running two suites at once that outlasted jest's 30 s; what these tests check
// is what the code can reach, not how fast.
jest.setTimeout(120_000);
const MODES = ["namespaces", "process"] as const;

describe.each(MODES)("a hostile automation in %s mode", (mode) => {
  let t: TestService;
  let otherKey: string;
  beforeAll(async () => {
    t = await startTestService({ config: { sandbox: mode, allowLocalNetwork: false } });
    expect(t.service.sandbox.mode).toBe(mode);
    otherKey = await t.newAccount("victim", "pro");
  });
  afterAll(async () => {
    await t.destroy(); // asserts that no worker or browser is left
  });

  it("cannot plant an API key, or write another account's runs and usage, with forged messages", async () => {
    const planted = generateApiKey();
    const hash = createHash("sha256").update(planted).digest("hex");
    const victim = await t.deploy("victim-fn", "export default async () => 1;", {}, otherKey);
    const usageBefore = (await t.call("GET", "/usage", { token: otherKey })).body;
    // At load the module listens for the run messages its worker gets, and answers each run
    // itself with a forged outcome that carries store keys, another account and absurd numbers:
    // with process.send where it has it, else raw on the IPC channel's descriptor (issue #26).
    await t.deploy(
      "forger",
      `import { writeSync } from "node:fs";
      const say = (message: unknown) => { try { if ((process as any).send) (process as any).send(message); else writeSync(3, JSON.stringify(message) + "\\n"); } catch { /* no channel */ } };
      const forged = (runId: string) => ({
        type: "done", runId, pk: "KEY#${hash}", sk: "KEY",
        outcome: { status: "succeeded", result_json: "{\\"forged\\":true}", logs: "", browser_ms: 3.6e12,
          pk: "KEY#${hash}", sk: "KEY", account_id: "local", admin: true, key_hash: "${hash}", key_id: "k", name: "x",
          function_id: "${victim.function_id}", run_id: "run_x", gsi1pk: "ACCOUNT#victim", gsi1sk: "KEY#k", duration_ms: 1e12 },
      });
      process.on("message", (message: any) => { if (message?.type === "run") say(forged(message.runId)); });
      export default async () => { say(forged("run_not_mine")); await new Promise((r) => setTimeout(r, 200)); return "honest"; };`,
    );
    const first = await t.call("POST", "/functions/forger");
    // A done without the worker process's token is the automation's: the host drops it, and the run's own answer counts.
    expect([first.status, first.body]).toEqual([200, "honest"]);
    await t.call("POST", "/functions/forger");
    const second = await t.call("POST", "/functions/forger");
    // Whatever the runs say about themselves, only their own outcome fields were taken.
    const planted401 = await t.call("GET", "/functions", { token: planted });
    expect(planted401.status).toBe(401);
    const keys = await t.call("GET", "/api-keys");
    expect(keys.status).toBe(200);
    const usageAfter = (await t.call("GET", "/usage", { token: otherKey })).body;
    expect(usageAfter.invocations).toBe(usageBefore.invocations);
    expect(usageAfter.browser_session_ms ?? 0).toBe(usageBefore.browser_session_ms ?? 0);
    expect((await t.call("GET", "/functions/victim-fn/logs", { token: otherKey })).body.items).toEqual([]);
    const runId = second.headers.get("x-run-id") as string;
    const run = (await t.call("GET", `/runs/${runId}`)).body;
    expect(run.function_name).toBe("forger");
    expect(run.browser_ms).toBeLessThanOrEqual(run.duration_ms);
    expect(run.duration_ms).toBeLessThan(60_000);
    const usage = (await t.call("GET", "/usage")).body;
    expect(usage.browser_session_ms ?? 0).toBeLessThan(60_000);
  });

  it("cannot reach the store, over loopback or from a page it visits", async () => {
    const port = new URL(t.service.dynamoEndpoint).port;
    await t.deploy(
      "store-thief",
      `import { Session } from "browserfn/runtime";
      export default async function run(port: string) {
        const request = { method: "POST", headers: { "x-amz-target": "DynamoDB_20120810.ListTables", "content-type": "application/x-amz-json-1.0", "x-amz-date": "20260101T000000Z", authorization: "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date;x-amz-target, Signature=0000000000000000000000000000000000000000000000000000000000000000" }, body: "{}" };
        let node: string;
        try { const response = await fetch("http://127.0.0.1:" + port + "/", request); node = response.status + " " + (await response.text()); } catch (error) { node = "refused: " + (error as any).cause?.code; }
        await using session = await Session.start();
        const page = await session.newPage();
        const browser = await page.evaluate(async (url, init) => {
          try { const response = await fetch(url, init); return response.status + " " + (await response.text()); } catch (error) { return "refused: " + String(error); }
        }, "http://127.0.0.1:" + port + "/", request);
        return { node, browser };
      }`,
    );
    const response = await t.call("POST", "/functions/store-thief", { body: { port } });
    expect(response.status).toBe(200);
    for (const answer of [response.body.node, response.body.browser]) {
      expect(answer).not.toMatch(/TableNames/);
      expect(answer).toMatch(/^(refused|403)/);
    }
  });

  it("finds no DevTools endpoint: browsers speak CDP over a pipe and listen on no socket", async () => {
    await t.deploy(
      "looker",
      `import { Session } from "browserfn/runtime";
      export default async function run() {
        await using session = await Session.start();
        const page = await session.newPage();
        await page.setContent("<title>open</title>");
        await new Promise((r) => setTimeout(r, 1500));
        return await page.title();
      }`,
    );
    const call = t.call("POST", "/functions/looker");
    await sleep(1000);
    const browsers = browserPids(t.service.runtimeDir);
    expect(browsers.length).toBeGreaterThan(0);
    const everyProcess = sandboxPids(t.service.runtimeDir);
    expect(listeningSockets(everyProcess)).toEqual([]);
    for (const pid of browsers) {
      const args = cmdline(pid);
      expect(args).toContain("--remote-debugging-pipe");
      expect(args.some((arg) => arg.startsWith("--remote-debugging-port"))).toBe(false);
      expect(args).not.toContain("--disable-web-security");
    }
    expect((await call).body).toBe("open");
  });

  it("cannot signal another account's worker", async () => {
    await t.deploy("sleeper", "export default async (ms: number = 2500) => { await new Promise((r) => setTimeout(r, ms)); return 'slept'; };", {}, otherKey);
    await t.deploy(
      "killer",
      `export default async function run(pids: number[]) {
        return pids.map((pid) => { try { process.kill(pid, "SIGKILL"); return "killed"; } catch (error) { return (error as any).code; } });
      }`,
    );
    const before = new Set(workerPids(t.service.runtimeDir));
    const sleeping = t.call("POST", "/functions/sleeper", { token: otherKey });
    let victims: number[] = [];
    // The sleeper's worker starts cold (several seconds on a machine busy with other suites).
    for (let i = 0; i < 300 && victims.length === 0; i++) {
      await sleep(50);
      victims = workerPids(t.service.runtimeDir).filter((pid) => !before.has(pid));
    }
    expect(victims.length).toBeGreaterThan(0);
    const attempt = await t.call("POST", "/functions/killer", { body: { pids: victims } });
    expect(attempt.status).toBe(200);
    expect(attempt.body).not.toContain("killed");
    const slept = await sleeping;
    expect(slept.status).toBe(200);
    expect(slept.body).toBe("slept");
  });

  it("stops running when its run has returned: timers it leaves, and timers it hides", async () => {
    await t.deploy(
      "lingerer",
      `const hog: number[][] = [];
      export default async function run(hidden: boolean = false) {
        const spin = () => { const end = Date.now() + 50; while (Date.now() < end) hog.push(new Array(1000).fill(1)); };
        if (hidden) globalThis.setInterval(spin, 1); else setInterval(spin, 1);
        return "returned";
      }`,
      { timeout_seconds: 5, memory_mb: 256 },
    );
    for (const hidden of [false, true]) {
      const response = await t.call("POST", "/functions/lingerer", { body: { hidden } });
      expect(response.body).toBe("returned");
      await sleep(500); // the worker is idle (frozen) or replaced by now
      // The least CPU of up to five 1.5 s windows: on a machine busy with other suites the tail
      // of the run's own clean-up (its worker process replaced, its browser reset) can reach into
      // the first; a timer left spinning uses most of a core in every window. A window in which
      // one of the processes ended does not count (what it used can no longer be read).
      let least = Infinity;
      for (let window = 0; window < 5 && least >= 150; window++) {
        const pids = sandboxPids(t.service.runtimeDir);
        const before = cpuMs(pids);
        await sleep(1500);
        const used = cpuMs(pids) - before;
        if (pids.every(isAlive)) least = Math.min(least, used);
      }
      expect(least).toBeLessThan(150);
    }
  });

  it("starts one browser per worker, however many it asks for, and leaves none behind", async () => {
    await t.deploy(
      "flooder",
      `import { Session } from "browserfn/runtime";
      export default async function run() {
        for (let i = 0; i < 6; i++) (process as any).send({ type: "browser_request" });
        await using session = await Session.start();
        const page = await session.newPage();
        await page.setContent("<title>flood</title>");
        await new Promise((r) => setTimeout(r, 1000));
        return await page.title();
      }`,
    );
    const before = new Set(browserPids(t.service.runtimeDir)); // other functions' warm browsers
    const fresh = () => browserPids(t.service.runtimeDir).filter((pid) => !before.has(pid));
    const call = t.call("POST", "/functions/flooder");
    let most = 0;
    for (let i = 0; i < 30; i++) {
      most = Math.max(most, fresh().length);
      await sleep(50);
    }
    await call;
    expect(most).toBeLessThanOrEqual(1);
    await t.call("DELETE", "/functions/flooder");
    // Its worker may still be replacing its process and browser for a next run (seconds on a busy machine): stopped once it has.
    for (let i = 0; i < 300 && fresh().length > 0; i++) await sleep(50);
    expect(fresh()).toEqual([]);
  });

  it("cannot read the data dir through file:// or download into it, even where the browser's user could", async () => {
    // As a data dir is to the browser of a service that does not run as root: readable and writable.
    const file = `${t.dataDir}/bootstrap-key`;
    writeFileSync(file, `${t.adminKey}\n`, { mode: 0o644 });
    chmodSync(t.dataDir, 0o777);
    try {
      await t.deploy("file-reader", FILE_READER);
      const response = await t.call("POST", "/functions/file-reader", { body: { file, dir: t.dataDir, controlName: "control.txt" } });
      expect(response.status).toBe(200);
      // Downloads work (into the sandbox's own capped /tmp, or the profile): the attack itself is sound.
      expect(response.body.control).toMatch(/"completed"/);
      expect(JSON.stringify(response.body)).not.toContain(t.adminKey);
      expect(readdirSync(t.dataDir)).not.toContain("planted.txt");
      expect(existsSync("/tmp/control.txt")).toBe(false);
    } finally {
      chmodSync(t.dataDir, 0o700);
    }
  });

  if (mode === "process") {
    it("cannot read another worker's browser profile through file:// (a uid per worker)", async () => {
      // The victim's browser writes its profile (cookies and all) while it runs.
      await t.deploy(
        "profile-owner",
        `import { Session } from "browserfn/runtime";
        export default async function run() { await using session = await Session.start(); const page = await session.newPage(); await page.setContent("<title>mine</title>"); return await page.title(); }`,
        {},
        otherKey,
      );
      expect((await t.call("POST", "/functions/profile-owner", { token: otherKey })).body).toBe("mine");
      await t.deploy("profile-reader", FILE_READER);
      // The reader's own browser starts first, so its profile is there to tell apart.
      await t.call("POST", "/functions/profile-reader", { body: { file: "/nonexistent", dir: "/nonexistent", controlName: "x" } });
      const profiles = readdirSync(t.service.runtimeDir).filter((name) => name.startsWith("profile-"));
      expect(profiles.length).toBeGreaterThanOrEqual(2);
      const readable: string[] = [];
      for (const profile of profiles) {
        const response = await t.call("POST", "/functions/profile-reader", {
          body: { file: `${t.service.runtimeDir}/${profile}/Default/Preferences`, dir: "/nonexistent", controlName: "x" },
        });
        if (!String(response.body.read).startsWith("error")) readable.push(profile);
      }
      // Only its own profile, never the other account's.
      expect(readable.length).toBeLessThanOrEqual(1);
    });
  }

  it("fails a 40 MB result as result_too_large without holding it, and a forged 40 MB message too", async () => {
    await t.deploy(
      "big",
      `import { writeSync } from "node:fs";
      export default async function run(forge: boolean = false) {
        const big = "x".repeat(40 * 1024 * 1024);
        // Raw on the IPC channel's descriptor (process.send is the runtime's, issue #26).
        if (forge) { writeSync(3, JSON.stringify({ type: "done", runId: "r", outcome: { status: "succeeded", result_json: JSON.stringify(big), logs: "", browser_ms: 0 } }) + "\\n"); await new Promise((r) => setTimeout(r, 3000)); }
        return big;
      }`,
      { memory_mb: 2048 },
    );
    const before = process.memoryUsage().rss;
    expectError(await t.call("POST", "/functions/big"), 500, "result_too_large");
    const forged = await t.call("POST", "/functions/big", { body: { forge: true } });
    expect(forged.status).toBe(500);
    expect(["result_too_large", "function_crashed"]).toContain(forged.body.error.code);
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024);
    // The service still serves.
    await t.deploy("after-big", "export default async () => 'ok';");
    expect((await t.call("POST", "/functions/after-big")).body).toBe("ok");
  });
});
