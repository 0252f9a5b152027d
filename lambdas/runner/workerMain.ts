/**
 * Entry point of a local worker process (bundled into worker.cjs by buildWorkerBundle),
 * started by its sandbox host (hostMain). It waits for `init`, answers `ready`, then serves
 * `run` messages one at a time: it answers each with `done`, resets the browser, and says
 * `idle` (naming what the run's code left running). It exits when the host's channel closes.
 */
import type { Browser } from "puppeteer-core";
// `import = require` (not `import from`): the bundle then holds puppeteer-core's CommonJS build
// only, the same one automations get from `require("puppeteer-core")`, not both builds.
// eslint-disable-next-line @typescript-eslint/no-require-imports
import puppeteer = require("puppeteer-core");
import type { Socket } from "node:net";
import { compileAutomation } from "./loadAutomation";
import { PipeTransport } from "./pipeTransport";
import type { BrowserReply, RunOutcome, RunRequest, SupervisorMessage, WorkerInit, WorkerMessage } from "./protocol";
import { startInvocation } from "./runInvocation";
import { pendingUserTimers } from "./userTimers";
import type { ArtifactSink } from "../../layers/runtime/runContext";
import { artifactMessages } from "./artifactMessages";
import { withStorageBudget } from "../artifacts/storageBudget";

function send(message: WorkerMessage): void {
  process.send?.(message);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The browser's pipe ends as they arrive, and who waits for them (one request at a time). */
let pipeEnds: { write?: Socket; read?: Socket } = {};
let browserReply: ((reply: { pipes: PipeTransport } | { failed: string }) => void) | undefined;

function onBrowserReply(reply: BrowserReply, handle: unknown): void {
  if (reply.type === "browser_failed") {
    browserReply?.({ failed: reply.message });
    return;
  }
  if (reply.end === "both") pipeEnds = { write: handle as Socket, read: handle as Socket };
  else pipeEnds[reply.end] = handle as Socket;
  const { write, read } = pipeEnds;
  if (write && read) {
    pipeEnds = {};
    browserReply?.({ pipes: new PipeTransport(write, read) });
  }
}

/** Asks the host for the worker's browser (it starts one; a browser left running is replaced). */
function requestBrowser(): Promise<PipeTransport> {
  return new Promise((resolve, reject) => {
    browserReply = (reply) => {
      browserReply = undefined;
      if ("pipes" in reply) resolve(reply.pipes);
      else reject(new Error(`No browser: ${reply.failed}`));
    };
    send({ type: "browser_request" });
  });
}

/**
 * The run's artifacts, sent to the service in parts (ARTIFACT_CHUNK_BYTES each, base64) over
 * the IPC channel; each part waits until it is handed to the channel, so a big file does not
 * pile up in memory. The service enforces the caps again and keeps the files.
 */
function artifactChannel(runId: string, artifactsUrl: string): ArtifactSink {
  const sendPart = (message: WorkerMessage) =>
    new Promise<void>((resolve, reject) => {
      if (!process.send) return reject(new Error("no channel to the service"));
      process.send(message, undefined, {}, (error) => (error ? reject(error) : resolve()));
    });
  let queue: Promise<unknown> = Promise.resolve();
  return {
    save(name, data, contentType) {
      // One artifact's parts in a row: saves are sent one after another.
      const sent = queue.then(async () => {
        for (const message of artifactMessages(runId, name, contentType, data)) await sendPart(message);
        return { name, url: `${artifactsUrl}${encodeURIComponent(name)}`, bytes: data.byteLength };
      });
      queue = sent.catch(() => undefined);
      return sent;
    },
  };
}

/** Connects to the worker's browser on first use, and again after it disconnects. */
function browserConnection(): () => Promise<Browser> {
  let connection: Promise<Browser> | undefined;
  return () => {
    connection ??= requestBrowser()
      .then((transport) => puppeteer.connect({ transport, defaultViewport: null }))
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

/** Counts of the kinds of handles and requests that keep this process's event loop going. */
function activeResources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}

/**
 * Sends a run's console output to the service as it is written, what one turn of the event loop
 * wrote in one message (the output is capped before it gets here, see captureConsole).
 */
function logStream(runId: string): (text: string) => void {
  let pending: string[] = [];
  return (text) => {
    if (pending.push(text) > 1) return;
    setImmediate(() => {
      const batch = pending.join("");
      pending = [];
      send({ type: "log", runId, text: batch });
    });
  };
}

/** Kinds of handles a run's code may open and leave open: servers and sockets. */
const WATCHED = new Set(["TCPServerWrap", "PipeServerWrap", "UDPWRAP", "TCPSocketWrap", "ProcessWrap"]);

/**
 * What a run left running: its own timers still pending, and servers or sockets beyond those
 * the worker had when it was ready. A worker with leftovers is replaced, not reused.
 */
function leftovers(baseline: Map<string, number>): string[] {
  const found: string[] = [];
  const timers = pendingUserTimers();
  if (timers > 0) found.push(`${timers} timer${timers === 1 ? "" : "s"}`);
  for (const [kind, count] of activeResources()) {
    const extra = count - (baseline.get(kind) ?? 0);
    if (WATCHED.has(kind) && extra > 0) found.push(`${extra} ${kind}`);
  }
  return found;
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
  let baseline = new Map<string, number>();
  // Runs are chained: never more than one at a time, even if the supervisor sends two.
  let queue: Promise<void> = Promise.resolve();

  const serve = async (request: RunRequest): Promise<void> => {
    if (!init || !getBrowser) {
      const error = { code: "function_error" as const, message: "The worker received a run before init" };
      const outcome: RunOutcome = { status: "failed", error, logs: "", browser_ms: 0 };
      send({ type: "done", runId: request.runId, outcome });
      send({ type: "idle", runId: request.runId, leftover: [] });
      return;
    }
    const { code, parameter_style: style, variables } = init;
    const { params, timeoutMs } = request;
    // The run stops itself at its timeout (keeping its logs and its pages' evidence); the
    // supervisor kills the worker only if it does not answer within a grace after it.
    const artifacts = withStorageBudget(artifactChannel(request.runId, request.artifactsUrl), request.storageBytesLeft);
    const downloadsDir = init.downloads_dir;
    const run = startInvocation({
      code,
      params,
      style,
      variables,
      getBrowser,
      timeoutMs,
      stopAfterMs: timeoutMs,
      artifacts,
      ...(downloadsDir ? { downloadsDir } : {}),
      secrets: request.secrets,
      onLog: logStream(request.runId),
    });
    // Answer first; the browser is reset before the next run is taken from the queue.
    const outcome = await run.outcome;
    send({ type: "done", runId: request.runId, outcome });
    await run.settled;
    // Timers of this turn (the outcome's own send) are done once the next turn comes.
    await new Promise((resolve) => setImmediate(resolve));
    // A run stopped at its timeout left its code pending (maybe on nothing a handle shows): the worker is replaced.
    const stopped = outcome.status === "failed" && outcome.error.code === "function_timeout" ? ["a run stopped at its timeout"] : [];
    send({ type: "idle", runId: request.runId, leftover: [...stopped, ...leftovers(baseline)] });
  };

  process.on("message", (message: SupervisorMessage, handle: unknown) => {
    if (message.type === "init") {
      const problem = init ? "the worker is already initialized" : checkInit(message);
      if (problem) return send({ type: "init_failed", message: problem });
      init = message;
      getBrowser = browserConnection();
      baseline = activeResources();
      return send({ type: "ready" });
    }
    if (message.type === "run") queue = queue.then(() => serve(message));
    if (message.type === "browser_pipe" || message.type === "browser_failed") onBrowserReply(message, handle);
    // Into the run's console output (if a run is in progress): why its pages went away.
    if (message.type === "browser_exited") console.error(`The browser exited (${message.detail})`);
  });
  // Stray failures of user code (a promise nobody awaited, a throw in a timer) must not take
  // the warm worker down: they go to the console, which is captured when a run is in progress.
  process.on("unhandledRejection", (reason) => console.error("Unhandled promise rejection:", reason));
  process.on("uncaughtException", (error) => console.error("Uncaught exception:", error));
  process.on("disconnect", () => process.exit(0));
}

main();
