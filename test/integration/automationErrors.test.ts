import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "puppeteer-core";
import { compileCode } from "../../lambdas/code/compileCode";
import { buildWorkerBundle } from "../../lambdas/runner/buildWorkerBundle";
import type { RunOutcome, WorkerMessage } from "../../lambdas/runner/protocol";
import { startInvocation } from "../../lambdas/runner/runInvocation";
import { launchTestBrowser, type PageServer, startPageServer } from "../helpers/testBrowser";

let browser: Browser;
let pages: PageServer;

beforeAll(async () => {
  pages = await startPageServer();
  browser = await launchTestBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await pages?.close();
});

/** Compiles `source` and runs it through startInvocation against the test browser. */
async function run(source: string, params: Record<string, unknown> = {}): Promise<RunOutcome> {
  const { js, variables, parameter_style } = compileCode(source);
  const getBrowser = async () => browser;
  const { outcome, settled } = startInvocation({ code: js, params, style: parameter_style, variables, getBrowser, timeoutMs: 20_000 });
  await settled;
  return outcome;
}

function failure(outcome: RunOutcome): { code: string; message: string; stack?: string } {
  if (outcome.status !== "failed") throw new Error(`run did not fail: ${JSON.stringify(outcome)}`);
  return outcome.error;
}

// Types, an interface, a helper and `await using` (whose lowering adds ~50 lines of helpers at
// the top of the compiled code): the compiled lines are far from the source's.
const THROWS = `import { Session } from "browserfn/runtime";

interface Check {
  selector: string;
  expected: string;
}

function verify(actual: string, check: Check): void {
  if (actual !== check.expected) {
    throw new Error(\`\${check.selector} says "\${actual}", expected "\${check.expected}"\`);
  }
}

export default async function run(url: string) {
  await using session = await Session.start();
  const page = await session.newPage();
  await page.goto(url);
  const title: string = await page.title();
  verify(title, { selector: "title", expected: "Goodbye" });
  return title;
}
`;

describe("the stack of an automation's error", () => {
  it("names the user's file, line and column of each frame of the user's code", async () => {
    const error = failure(await run(THROWS, { url: `${pages.base}/stack` }));
    expect(error).toMatchObject({ code: "function_error", message: 'title says "Hello /stack", expected "Goodbye"' });
    const lines = (error.stack ?? "").split("\n");
    expect(lines[0]).toBe('Error: title says "Hello /stack", expected "Goodbye"');
    expect(lines[1]).toBe("    at verify (automation.ts:10:11)");
    expect(lines[2]).toBe("    at run (automation.ts:19:3)");
    expect(error.stack).not.toContain("/automation/index.js");
  });

  it("names the user's line that awaited a failing browser call", async () => {
    const source = `import { Session } from "browserfn/runtime";
export default async function run(url: string) {
  await using session = await Session.start();
  const page = await session.newPage();
  await page.goto(url);

  await page.waitForSelector("#missing", { timeout: 50 });
}`;
    const error = failure(await run(source, { url: `${pages.base}/wait` }));
    expect(error.message).toBe("Waiting for selector `#missing` failed");
    expect(error.stack).toMatch(/^TimeoutError: Waiting for selector `#missing` failed\n/);
    expect(error.stack).toContain("    at run (automation.ts:7:3)");
  });

  it("is mapped in the worker bundle, under the permission model, as in this process", async () => {
    const dir = await mkdtemp(join(tmpdir(), "automation-stack-"));
    const bundle = await buildWorkerBundle(dir);
    const child = spawn(process.execPath, ["--experimental-permission", `--allow-fs-read=${bundle}`, bundle], {
      env: {},
      stdio: ["ignore", "ignore", "ignore", "ipc"],
    });
    const exited = once(child, "exit");
    const messages: WorkerMessage[] = [];
    const next = async (type: WorkerMessage["type"]): Promise<WorkerMessage> => {
      for (;;) {
        const found = messages.findIndex((message) => message.type === type);
        if (found >= 0) return messages.splice(found, 1)[0] as WorkerMessage;
        await once(child, "message");
      }
    };
    child.on("message", (message: WorkerMessage) => messages.push(message));
    try {
      const { js: code, variables, parameter_style } = compileCode(`export default async function run(n: number) {
  const items: number[] = [];
  for (let i = 0; i < n; i++) items.push(i);

  throw new RangeError(\`\${items.length} items\`);
}`);
      child.send({ type: "init", code, parameter_style, variables });
      expect(await next("ready")).toEqual({ type: "ready" });
      child.send({ type: "run", runId: "r1", params: { n: 3 }, timeoutMs: 20_000 });
      const done = await next("done");
      if (done.type !== "done" || done.outcome.status !== "failed") throw new Error(`unexpected ${JSON.stringify(done)}`);
      expect(done.outcome.error.message).toBe("3 items");
      expect(done.outcome.error.stack).toMatch(/^RangeError: 3 items\n {4}at run \(automation\.ts:5:9\)\n/);
      child.disconnect();
      expect(await exited).toEqual([0, null]);
    } finally {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe("a browser call that outlives its session", () => {
  const HINT =
    "The browser call failed: the session was closed before this call finished — did the function return a promise " +
    "without `await` inside `await using session` (or close the session before the promise settled)? Write `return await …`.";

  it("names the fix for `return <promise>` inside `await using session` when the session closes under the call", async () => {
    // A disposed session keeps its pages until the run ends (so with one session the classic
    // `return page.title()` gets its title), but only the newest few of them
    // (MAX_RETIRED_SESSIONS): a fourth disposal closes the first, under its pending call (15 s
    // long, so that it is still pending however slowly a busy machine starts the five sessions).
    const source = `import { Session } from "browserfn/runtime";
async function titleOf(url: string) {
  await using session = await Session.start();
  const page = await session.newPage();
  await page.goto(url);
  return handled(page.evaluate(() => new Promise((resolve) => setTimeout(() => resolve(document.title), 15_000))));
}
export default async function run(url: string) {
  return Promise.all([1, 2, 3, 4, 5].map((n) => titleOf(url + "/" + n)));
}
// The call may fail while titleOf still awaits its session's disposal, before Promise.all holds
// it: marked handled at once, so that this process (the test's) sees no unhandled rejection.
function handled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}`;
    expect(compileCode(source).warnings.map((warning) => warning.line)).toEqual([6]);
    const error = failure(await run(source, { url: pages.base }));
    expect(error.code).toBe("function_error");
    expect(error.message).toBe(`${HINT} Original error: Protocol error (Runtime.callFunctionOn): Target closed`);
    expect(error.stack).toMatch(/^TargetCloseError: Protocol error \(Runtime\.callFunctionOn\): Target closed\n/);
    expect(browser.browserContexts()).toHaveLength(1);

    // Any other failure keeps its message as it is.
    const other = `import { Session } from "browserfn/runtime";
export default async function run(url: string) {
  await using session = await Session.start();
  const page = await session.newPage();
  await page.goto(url);
  return await page.$eval("#missing", (element) => element.textContent);
}`;
    expect(failure(await run(other, { url: `${pages.base}/other` })).message).toBe('Error: failed to find element matching selector "#missing"');
  });
});
