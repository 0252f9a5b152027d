/**
 * Entry point of a local worker process (bundled into worker.cjs by buildWorkerBundle).
 * It waits for `init`, answers `ready`, then serves `run` messages one at a time and
 * answers each with `done`. It exits when the supervisor's IPC channel closes.
 */
import type { Browser } from "puppeteer-core";
// `import = require` (not `import from`): the bundle then holds puppeteer-core's CommonJS build
// only, the same one automations get from `require("puppeteer-core")`, not both builds.
// eslint-disable-next-line @typescript-eslint/no-require-imports
import puppeteer = require("puppeteer-core");
import { compileAutomation } from "./loadAutomation";
import type { BrowserReply, RunOutcome, RunRequest, SupervisorMessage, WorkerInit, WorkerMessage } from "./protocol";
import { startInvocation } from "./runInvocation";

function send(message: WorkerMessage): void {
  process.send?.(message);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Answers to browser requests, in order (one request is in flight at a time). */
let browserReply: ((reply: BrowserReply) => void) | undefined;

/** Asks the supervisor for the worker's browser (it launches one if there is none). */
function requestBrowser(): Promise<string> {
  return new Promise((resolve, reject) => {
    browserReply = (reply) => {
      browserReply = undefined;
      if (reply.type === "browser") resolve(reply.wsEndpoint);
      else reject(new Error(`No browser: ${reply.message}`));
    };
    send({ type: "browser_request" });
  });
}

/** Connects to the worker's browser on first use, and again after it disconnects. */
function browserConnection(): () => Promise<Browser> {
  let connection: Promise<Browser> | undefined;
  return () => {
    connection ??= requestBrowser()
      .then((browserWSEndpoint) => puppeteer.connect({ browserWSEndpoint, defaultViewport: null }))
      .then(
      (browser) => {
        browser.once("disconnected", () => (connection = undefined));
        return browser;
      },
      (error: unknown) => {
        connection = undefined;
        throw error;
      },
    );
    return connection;
  };
}

function checkInit(message: WorkerInit): string | undefined {
  if (typeof message.code !== "string") return "init has no code";
  if (message.parameter_style !== "positional" && message.parameter_style !== "object") {
    return "init has no valid parameter_style";
  }
  if (!Array.isArray(message.variables)) return "init has no variables";
  try {
    compileAutomation(message.code); // parses only: top-level code runs in the first run
  } catch (error) {
    return `the code does not parse: ${describe(error)}`;
  }
  return undefined;
}

function main(): void {
  if (!process.send) {
    process.stderr.write("workerMain must be started with an IPC channel\n");
    process.exit(2);
  }
  let init: WorkerInit | undefined;
  let getBrowser: (() => Promise<Browser>) | undefined;
  // Runs are chained: never more than one at a time, even if the supervisor sends two.
  let queue: Promise<void> = Promise.resolve();

  const serve = async (request: RunRequest): Promise<void> => {
    if (!init || !getBrowser) {
      const error = { code: "function_error" as const, message: "The worker received a run before init" };
      const outcome: RunOutcome = { status: "failed", error, logs: "", browser_ms: 0 };
      send({ type: "done", runId: request.runId, outcome });
      return;
    }
    const { code, parameter_style: style, variables } = init;
    const { params, timeoutMs } = request;
    const run = startInvocation({ code, params, style, variables, getBrowser, timeoutMs });
    // Answer first; the browser is reset before the next run is taken from the queue.
    send({ type: "done", runId: request.runId, outcome: await run.outcome });
    await run.settled;
  };

  process.on("message", (message: SupervisorMessage) => {
    if (message.type === "init") {
      const problem = init ? "the worker is already initialized" : checkInit(message);
      if (problem) return send({ type: "init_failed", message: problem });
      init = message;
      getBrowser = browserConnection();
      return send({ type: "ready" });
    }
    if (message.type === "run") queue = queue.then(() => serve(message));
    if (message.type === "browser" || message.type === "browser_failed") browserReply?.(message);
  });
  // Stray failures of user code (a promise nobody awaited, a throw in a timer) must not take
  // the warm worker down: they go to the console, which is captured when a run is in progress.
  process.on("unhandledRejection", (reason) => console.error("Unhandled promise rejection:", reason));
  process.on("uncaughtException", (error) => console.error("Uncaught exception:", error));
  process.on("disconnect", () => process.exit(0));
}

main();
