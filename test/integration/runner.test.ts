import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "puppeteer-core";
import { Session } from "../../layers/runtime/index";
import { compileCode } from "../../lambdas/code/compileCode";
import { buildWorkerBundle } from "../../lambdas/runner/buildWorkerBundle";
import { MAX_LOG_BYTES, type RunOutcome, type WorkerMessage } from "../../lambdas/runner/protocol";
import { runInvocation } from "../../lambdas/runner/runInvocation";
import { EVIDENCE_LOG_BYTES } from "../../lambdas/runner/failureEvidence";
import { chromiumArgs, chromiumFiles } from "../../lambdas/runtime/local/sandbox/chromium";
import { TITLE_FN } from "../helpers/code";
import { launchTestBrowser, type PageServer, startPageServer } from "../helpers/testBrowser";

let browser: Browser;
let pages: PageServer;
let base: string;

beforeAll(async () => {
  pages = await startPageServer();
  base = pages.base;
  browser = await launchTestBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await pages?.close();
});

/** Compiles `source` and runs it in-process against the test browser. */
async function run(source: string, params: Record<string, unknown> = {}, timeoutMs = 20_000): Promise<RunOutcome> {
  const { js, variables, parameter_style } = compileCode(source);
  const getBrowser = async () => browser;
  return runInvocation({ code: js, params, style: parameter_style, variables, getBrowser, timeoutMs });
}

function succeeded(outcome: RunOutcome): unknown {
  if (outcome.status !== "succeeded") throw new Error(`run failed: ${JSON.stringify(outcome)}`);
  return JSON.parse(outcome.result_json);
}

describe("runInvocation with a real browser", () => {
  it("reads a served page's title through a Session and meters browser time", async () => {
    const outcome = await run(TITLE_FN, { url: `${base}/title` });
    expect(succeeded(outcome)).toEqual({ title: "Hello /title", max_items: 10 });
    expect(outcome.browser_ms).toBeGreaterThan(0);
    expect(browser.browserContexts()).toHaveLength(1);
  });

  it("passes positional and object parameters by name; absent ones take the JS defaults", async () => {
    const positional = `export default async (a: string, b = 2, c?: string) => [a, b, c ?? "none"];`;
    expect(succeeded(await run(positional, { a: "x" }))).toEqual(["x", 2, "none"]);
    expect(succeeded(await run(positional, { c: "z", b: null, a: "x" }))).toEqual(["x", null, "z"]);
    const object = `export default async ({ a, b = 2 }: { a: string; b?: number }) => ({ a, b });`;
    expect(succeeded(await run(object, { a: "x" }))).toEqual({ a: "x", b: 2 });
    expect(succeeded(await run(object, { a: "x", b: 5 }))).toEqual({ a: "x", b: 5 });
  });

  it("captures console output by level and restores the console", async () => {
    const original = console.log;
    const outcome = await run(`export default async () => {
      console.log("a %s", "b", 1); console.info({ x: [1] }); console.warn("w"); console.error(new Error("e").message);
      console.debug("d"); throw new Error("after logging");
    }`);
    expect(outcome.logs).toBe("LOG a b 1\nINFO { x: [ 1 ] }\nWARN w\nERROR e\nDEBUG d\n");
    expect(console.log).toBe(original);
  });

  it("cuts console output at 64 KB with a note, less the room kept for a failure's evidence", async () => {
    const outcome = await run(`export default async () => { for (let i = 0; i < 100; i++) console.log("é".repeat(500)); };`);
    expect(Buffer.byteLength(outcome.logs)).toBeLessThanOrEqual(MAX_LOG_BYTES - EVIDENCE_LOG_BYTES);
    expect(Buffer.byteLength(outcome.logs)).toBeGreaterThan(MAX_LOG_BYTES - EVIDENCE_LOG_BYTES - 8);
    expect(outcome.logs.endsWith("é…[output truncated]\n")).toBe(true);
  });

  it("reports a thrown error as function_error, a thrown non-Error as its text", async () => {
    const outcome = await run(`export default async () => { throw new TypeError("boom"); };`);
    expect(outcome).toMatchObject({ status: "failed", error: { code: "function_error", message: "boom" } });
    expect(outcome.status === "failed" && outcome.error.stack).toMatch(/^TypeError: boom\n {4}at .*\(automation\.ts:1:\d+\)\n/);
    const plain = await run(`export default async () => { throw "plain"; };`);
    expect(plain).toMatchObject({ status: "failed", error: { code: "function_error", message: "plain" } });
  });

  it("refuses results JSON cannot hold, and turns undefined into null", async () => {
    const cases: Array<[string, RegExp]> = [
      ["10n", /BigInt/],
      ["(() => { const o: any = {}; o.self = o; return o; })()", /circular/i],
      ["() => 1", /a function has no JSON form/],
    ];
    for (const [value, reason] of cases) {
      const outcome = await run(`export default async () => ${value};`);
      expect(outcome).toMatchObject({ status: "failed", error: { code: "result_not_serializable" } });
      expect(outcome.status === "failed" && outcome.error.message).toMatch(reason);
    }
    expect(await run("export default async () => {};")).toMatchObject({ status: "succeeded", result_json: "null" });
  });

  it("gives each session its own cookies", async () => {
    const source = `import { Session } from "browserfn/runtime";
    export default async function run(base: string) {
      await using a = await Session.start();
      await using b = await Session.start();
      const pa = await a.newPage(); await pa.goto(base + "/set-cookie");
      const pb = await b.newPage(); await pb.goto(base + "/other");
      return [await pa.evaluate(() => document.cookie), await pb.evaluate(() => document.cookie)];
    }`;
    expect(succeeded(await run(source, { base }))).toEqual(["token=secret", ""]);
  });

  it("leaves nothing of a run for the next one on the same browser", async () => {
    // The first run sets cookies in a session and in the default context, and closes nothing.
    const first = `import { Session } from "browserfn/runtime";
    export default async function run(base: string) {
      const page = await (await Session.start()).newPage();
      await page.goto(base + "/set-cookie");
      const shared = await page.browser().defaultBrowserContext().newPage();
      await shared.goto(base + "/set-cookie");
    }`;
    const outcome = await run(first, { base });
    expect(outcome.status).toBe("succeeded");
    expect(outcome.browser_ms).toBeGreaterThan(0);
    expect(browser.browserContexts()).toHaveLength(1);
    const second = `import { Session } from "browserfn/runtime";
    export default async function run(base: string) {
      const page = await (await Session.start()).newPage();
      await page.goto(base + "/check");
      const browser = page.browser();
      const shared = (await browser.defaultBrowserContext().pages()).length;
      return { seen: await page.$eval("p", (p) => p.textContent), jar: (await browser.cookies()).length, shared };
    }`;
    expect(succeeded(await run(second, { base }))).toEqual({ seen: "no cookie", jar: 0, shared: 0 });
  });

  it("closes a session at its timeout; at the run's timeout the runner ends the run and closes its sessions", async () => {
    const source = `import { Session } from "browserfn/runtime";
    export default async function run(minutes: number) {
      const session = await Session.start({ timeout_minutes: minutes });
      await new Promise((resolve) => setTimeout(resolve, 600));
      return session.newPage().then(() => "open", (error) => error.message);
    }`;
    expect(succeeded(await run(source, { minutes: 0.005 }))).toBe("The session is closed: it reached its timeout");
    // The runners stop a run at its timeout (stopAfterMs) after keeping its pages' evidence.
    const { js, variables, parameter_style } = compileCode(source);
    const stopped = await runInvocation({ code: js, params: { minutes: 5 }, style: parameter_style, variables, getBrowser: async () => browser, timeoutMs: 300, stopAfterMs: 300 });
    expect(stopped).toMatchObject({ status: "failed", error: { code: "function_timeout" } });
    expect((await browser.browserContexts()).length).toBe(1); // the session's context is gone: only the default one
  });

  it("offers only the runtime, puppeteer-core and Node built-ins", async () => {
    const source = `import puppeteer from "puppeteer-core"; import { join } from "path"; import { Session } from "browserfn/runtime";
    export default async () => [typeof puppeteer.connect, join("a", "b"), typeof Session.start];`;
    expect(succeeded(await run(source))).toEqual(["function", "a/b", "function"]);
    const outcome = await run(`import leftPad from "left-pad"; export default async () => leftPad("x", 3);`);
    expect(outcome).toMatchObject({
      status: "failed",
      error: {
        code: "function_error",
        message: "Module 'left-pad' is not available to automations; bundle it into your module (for example with esbuild)",
      },
    });
  });

  it("evaluates a module once per code string and never connects for browserless code", async () => {
    const { js, variables } = compileCode("const loaded = Math.random(); export default async () => loaded;");
    let connects = 0;
    const getBrowser = async () => (connects++, browser);
    const invocation = { code: js, params: {}, style: "positional" as const, variables, getBrowser, timeoutMs: 1000 };
    const first = await runInvocation(invocation);
    expect(await runInvocation(invocation)).toEqual(first);
    expect(connects).toBe(0);
  });

  it("stops a run still going after stopAfterMs: function_timeout with the logs and browser time so far, sessions closed", async () => {
    const source = `import { Session } from "browserfn/runtime";
    export default async function run(base: string) {
      const page = await (await Session.start()).newPage();
      await page.goto(base + "/slow");
      console.log("loaded", await page.title());
      await new Promise(() => undefined);
    }`;
    const { js, variables, parameter_style } = compileCode(source);
    const original = console.log;
    const started = Date.now();
    const getBrowser = async () => browser;
    const outcome = await runInvocation({ code: js, params: { base }, style: parameter_style, variables, getBrowser, timeoutMs: 20_000, stopAfterMs: 3000 });
    // 3 s: the page loads and logs first even on a busy machine.
    expect(Date.now() - started).toBeGreaterThanOrEqual(3000);
    expect(outcome).toStrictEqual({
      status: "failed",
      error: { code: "function_timeout", message: "The function did not finish within its timeout of 20 s" },
      logs: "LOG loaded Hello /slow\n",
      browser_ms: expect.any(Number),
    });
    expect(outcome.browser_ms).toBeGreaterThan(0);
    expect(console.log).toBe(original);
    expect(browser.browserContexts()).toHaveLength(1);
    // The abandoned run no longer holds the worker: the next one runs.
    expect(succeeded(await run(TITLE_FN, { url: `${base}/title` }))).toEqual({ title: "Hello /title", max_items: 10 });
  });

  it("refuses Session.start outside a run", async () => {
    await expect(Session.start()).rejects.toThrow(/only be called while browserfn runs your function/);
  });
});

const ESCAPES = `import { Session } from "browserfn/runtime";
export default async function run(url: string, disconnect = false) {
  const attempt = (action: () => unknown) => {
    try { return "allowed: " + String(action()).trim(); } catch (error: any) { return error.code + ": " + error.message; }
  };
  await using session = await Session.start();
  const page = await session.newPage();
  await page.goto(url);
  void Promise.reject(new Error("nobody awaits this"));
  const title = await page.title();
  if (disconnect) await page.browser().disconnect();
  return {
    title,
    read: attempt(() => require("fs").readFileSync("/etc/hostname", "utf8")),
    write: attempt(() => require("fs").writeFileSync("/tmp/x", "y")),
    exec: attempt(() => require("child_process").execSync("id")),
    thread: attempt(() => new (require("worker_threads").Worker)("1", { eval: true })),
    env: Object.keys(process.env),
  };
}`;

describe("the worker bundle in a real child process", () => {
  it("serves runs under the permission model with an empty environment", async () => {
    const dir = await mkdtemp(join(tmpdir(), "worker-bundle-"));
    const bundle = await buildWorkerBundle(dir);
    // One copy of puppeteer-core (CommonJS), without its launchers: ~1.8 MB; both builds or the
    // launcher dependencies would more than double it.
    expect((await stat(bundle)).size).toBeLessThan(2_500_000);
    // The test plays the sandbox's host: a worker process per run (hostMain replaces it after its answer).
    const browsers: ReturnType<typeof spawn>[] = [];
    const children: ReturnType<typeof spawn>[] = [];
    const { executable } = await chromiumFiles();
    const runOnce = async (runId: string, params: Record<string, unknown>): Promise<RunOutcome> => {
      const child = spawn(process.execPath, ["--experimental-permission", `--allow-fs-read=${bundle}`, bundle], {
        env: {},
        stdio: ["ignore", "pipe", "pipe", "ipc"],
      });
      children.push(child);
      child.stdout?.resume();
      child.stderr?.resume();
      const exited = once(child, "exit");
      // The worker asks for its browser when a session first needs one: the test starts Chromium
      // with a CDP pipe and hands the worker both ends.
      const replies: WorkerMessage[] = [];
      const waiting: ((message: WorkerMessage) => void)[] = [];
      let streamed = ""; // console output as it was written
      child.on("message", (message: WorkerMessage) => {
        if (message.type === "log") return void (streamed += message.text);
        if (message.type === "browser_request") {
          const chromium = spawn(executable, [...chromiumArgs(), "--remote-debugging-pipe", `--user-data-dir=${dir}/profile-${browsers.length}`, "about:blank"], {
            stdio: ["ignore", "ignore", "ignore", "pipe", "pipe"],
          });
          browsers.push(chromium);
          child.send({ type: "browser_pipe", end: "write" }, chromium.stdio[3] as never);
          child.send({ type: "browser_pipe", end: "read" }, chromium.stdio[4] as never);
          return;
        }
        const resolve = waiting.shift();
        if (resolve) resolve(message);
        else replies.push(message);
      });
      const next = () =>
        replies.length > 0 ? Promise.resolve(replies.shift() as WorkerMessage) : new Promise<WorkerMessage>((r) => waiting.push(r));
      const { js: code, variables, parameter_style } = compileCode(ESCAPES);
      child.send({ type: "init", code, parameter_style, variables, token: `token-${runId}` });
      expect(await next()).toEqual({ type: "ready" });
      child.send({ type: "run", runId, params, timeoutMs: 20_000 });
      const done = await next();
      if (done.type !== "done" || done.runId !== runId) throw new Error(`unexpected ${JSON.stringify(done)}`);
      // Its answer carries the token the host gave it in init: what makes it the runtime's.
      expect(done.token).toBe(`token-${runId}`);
      // What was streamed while it ran is what the answer carries.
      expect(streamed).toBe(done.outcome.logs);
      // The worker ends itself when the supervisor's IPC channel closes.
      child.disconnect();
      expect(await exited).toEqual([0, null]);
      return done.outcome;
    };
    try {
      // The first run drops the worker's browser connection (and answers anyway).
      const outcome = await runOnce("r1", { url: `${base}/worker`, disconnect: true });
      expect(outcome.logs).toMatch(/^ERROR Unhandled promise rejection: Error: nobody awaits this\n/);
      expect(succeeded(await runOnce("r2", { url: `${base}/again` }))).toMatchObject({ title: "Hello /again" });
      const result = succeeded(outcome);
      expect(result).toEqual({
        title: "Hello /worker",
        read: expect.stringMatching(/^ERR_ACCESS_DENIED: /),
        write: expect.stringMatching(/^ERR_ACCESS_DENIED: /),
        exec: expect.stringMatching(/^ERR_ACCESS_DENIED: /),
        thread: expect.stringMatching(/^ERR_ACCESS_DENIED: /),
        env: [],
      });
    } finally {
      for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      for (const chromium of browsers) chromium.kill("SIGKILL");
      await rm(dir, { recursive: true, force: true });
    }
    for (const child of children) {
      if (child.exitCode === null && child.signalCode === null) await once(child, "exit");
      expect(() => process.kill(child.pid ?? 0, 0)).toThrow(expect.objectContaining({ code: "ESRCH" }));
    }
  }, 90_000);
});
