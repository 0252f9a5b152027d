/**
 * memory_mb below what Chromium can start in (issue #23, item 3): a function at 128 MB runs code
 * that uses no browser, and a browser session start below BROWSER_MIN_MEMORY_MB fails the run
 * with `insufficient_memory` and a message that says why, without launching Chromium, on the
 * local runtime (a real sandboxed worker) and in the Lambda runner (the real handler).
 */
import { spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { compileCode } from "../../lambdas/code/compileCode";
import { BROWSER_MIN_MEMORY_MB } from "../../lambdas/runner/browserMemory";
import { createLambdaHandler, lambdaMemoryMb } from "../../lambdas/runner/lambdaHandler";
import { type FunctionMeta, RUNNER_PROTOCOL } from "../../lambdas/runner/lambdaPackage";
import { outcomeEndingOf } from "../../lambdas/runtime/aws/invokeOutcome";
import { expectError } from "../helpers/http";
import { startTestService, type TestService } from "../helpers/localService";
import { launchTestBrowser } from "../helpers/testBrowser";

const NO_BROWSER = `export default async function run(n: number) { return { doubled: n * 2 }; }`;

/** Opens a session; `caught` swallows the session's error and returns what it said instead. */
const BROWSER = `import { Session } from "browserfn/runtime";
export default async function run(caught: boolean) {
  try {
    await using session = await Session.start();
    const page = await session.newPage();
    await page.setContent("<title>up</title>");
    return await page.title();
  } catch (error) {
    if (!caught) throw error;
    return "caught: " + (error as Error).message;
  }
}`;

const REFUSED = new RegExp(`^A browser session needs memory_mb of at least ${BROWSER_MIN_MEMORY_MB}; this function has 256 MB`);

describe("memory_mb below a browser's floor, locally", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  }, 60_000);
  afterAll(async () => {
    await t?.destroy();
  });

  it("runs code without a browser at 128 MB", async () => {
    await t.deploy("small", NO_BROWSER, { memory_mb: 128 });
    const response = await t.call("POST", "/functions/small", { body: { n: 21 } });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ doubled: 42 });
  }, 60_000);

  it("fails a browser session start at 256 MB with insufficient_memory; code that catches it goes on", async () => {
    await t.deploy("browsing", BROWSER, { memory_mb: 256 });
    const response = await t.call("POST", "/functions/browsing", { body: { caught: false } });
    expectError(response, 500, "insufficient_memory");
    expect(response.body.error.message).toMatch(REFUSED);
    const run = (await t.call("GET", `/runs/${response.headers.get("x-run-id")}`)).body;
    expect(run).toMatchObject({ status: "failed", error: { code: "insufficient_memory" }, browser_ms: 0 });
    const caught = await t.call("POST", "/functions/browsing", { body: { caught: true } });
    expect(caught.status).toBe(200);
    expect(caught.body).toMatch(/^caught: A browser session needs memory_mb of at least/);
  }, 60_000);

  it("starts the browser at the floor", async () => {
    await t.deploy("enough", BROWSER, { memory_mb: BROWSER_MIN_MEMORY_MB });
    const response = await t.call("POST", "/functions/enough", { body: { caught: false } });
    expect(response.status).toBe(200);
    expect(response.body).toBe("up");
  }, 60_000);
});

describe("memory_mb below a browser's floor, in the Lambda runner", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "browserfn-lambda-memory-"));
    const compiled = compileCode(BROWSER);
    const meta: FunctionMeta = { parameter_style: compiled.parameter_style, variables: compiled.variables };
    await writeFile(path.join(dir, "code.cjs"), compiled.js);
    await writeFile(path.join(dir, "meta.json"), JSON.stringify(meta));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("reads the function's memory from Lambda's environment", () => {
    expect(lambdaMemoryMb({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: "256" })).toBe(256);
    expect(lambdaMemoryMb({})).toBeUndefined();
    expect(lambdaMemoryMb({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: "lots" })).toBeUndefined();
  });

  it("answers insufficient_memory at 256 MB and never launches Chromium; at the floor the session starts", async () => {
    let launches = 0;
    const launchBrowser = () => {
      launches++;
      return launchTestBrowser();
    };
    const small = createLambdaHandler(dir, { launchBrowser, memoryMb: 256 });
    try {
      const answer = await small({ run_id: "run_small", params: { caught: false }, timeout_ms: 20_000 });
      expect(answer).toMatchObject({ status: "failed", error: { code: "insufficient_memory" }, runner_protocol: RUNNER_PROTOCOL });
      expect("error" in answer && answer.error.message).toMatch(REFUSED);
      expect(launches).toBe(0);
    } finally {
      await small.close();
    }
    const enough = createLambdaHandler(dir, { launchBrowser, memoryMb: BROWSER_MIN_MEMORY_MB });
    try {
      const answer = await enough({ run_id: "run_enough", params: { caught: false }, timeout_ms: 20_000 });
      expect(answer).toMatchObject({ status: "succeeded", result_json: '"up"' });
      expect(launches).toBe(1);
    } finally {
      await enough.close();
    }
  }, 60_000);
});

/** Opens a page and waits there until the run's timeout (or until the browser goes). */
const HANGS_ON_PAGE = `import { Session } from "browserfn/runtime";
export default async function run() {
  await using session = await Session.start();
  const page = await session.newPage();
  await page.setContent("<title>open</title>");
  console.log("page open");
  await page.waitForFunction(() => false, { timeout: 0 });
}`;

describe("an out-of-memory kill of the browser in the Lambda runner", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "browserfn-lambda-oom-"));
    const compiled = compileCode(HANGS_ON_PAGE);
    const meta: FunctionMeta = { parameter_style: compiled.parameter_style, variables: compiled.variables };
    await writeFile(path.join(dir, "code.cjs"), compiled.js);
    await writeFile(path.join(dir, "meta.json"), JSON.stringify(meta));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("is answered out_of_memory (never function_timeout) and recorded function_crashed naming the limit", async () => {
    const launched: import("puppeteer-core").Browser[] = [];
    const handler = createLambdaHandler(dir, { launchBrowser: async () => launched[launched.push(await launchTestBrowser()) - 1]!, memoryMb: 1024 });
    try {
      const answer = handler({ run_id: "run_oom", params: {}, timeout_ms: 8_000 });
      // The kernel's out-of-memory killer, as it ends Chromium: SIGKILL from outside this process's kill().
      for (let i = 0; i < 200 && launched.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const pid = launched[0]?.process()?.pid;
      expect(pid).toBeGreaterThan(0);
      spawnSync("kill", ["-KILL", String(pid)]);
      const answered = await answer;
      expect(answered).toMatchObject({ status: "failed", error: { code: "out_of_memory", message: expect.stringMatching(/^The browser was killed \(SIGKILL\) while the run went on: the function ran out of its memory of 1024 MB/) } });
      expect((answered as { logs: string }).logs).toContain("page open");
      const ending = outcomeEndingOf(answered, { maxBrowserMs: 60_000, memoryMb: 1024 });
      expect(ending).toMatchObject({ status: "failed", error: { code: "function_crashed", message: "The function ran out of memory: its limit is 1024 MB (its browser was killed)" } });
    } finally {
      await handler.close();
    }
  }, 60_000);
});
