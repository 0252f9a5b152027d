/**
 * Entry point of a local worker process (bundled into worker.cjs by buildWorkerBundle),
 * started by its sandbox host (hostMain). It takes its IPC channel out of the automation's
 * reach (takeChannel) and closes the heap's readers before any automation code exists, waits
 * for `init` (which carries the token its `done` must carry), answers `ready`, then serves ONE
 * `run`: it answers it with `done` and the host replaces the process. Nothing a run does to
 * this process (listeners, timers, globals, patched builtins, module state) reaches another run.
 * It exits when the host's channel closes.
 */
import type { Socket } from "node:net";
import { compileAutomation } from "./loadAutomation";
import { PipeTransport } from "./pipeTransport";
import { browserDrivers, type BrowserDrivers } from "./drivers/browserDrivers";
import { connectPlaywright } from "./drivers/connectPlaywright";
import { usesPlaywright } from "./drivers/usesPlaywright";
import type { BrowserReply, RunOutcome, RunRequest, SupervisorMessage, WorkerInit, WorkerMessage } from "./protocol";
import { startInvocation } from "./runInvocation";
import type { ArtifactSink } from "../../layers/runtime/runContext";
import { artifactMessages } from "./artifactMessages";
import { withStorageBudget } from "../artifacts/storageBudget";
import { type PrivateChannel, takeChannel } from "./privateChannel/takeChannel";
import { closeHeapReaders } from "./privateChannel/heapReaders";
import { LiveScreencast } from "../live/screencast";
import { profileMessages } from "./profileMessages";
// puppeteer-core is evaluated at its first use, not at the process's start (see loadPuppeteer).
import { loadPuppeteer } from "../../layers/runtime/scripts/loadPuppeteer";

/** The channel to the host, taken by main() before anything else runs. */
let channel: PrivateChannel | undefined;

function send(message: WorkerMessage): void {
  channel?.send(message);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The browser's pipe ends as they arrive, and who waits for them (one request at a time). */
let pipeEnds: { write?: Socket; read?: Socket } = {};
let browserReply: ((reply: { pipes: PipeTransport } | { failed: string }) => void) | undefined;
/** A browser the host started before this worker asked (the last run used one): the first request takes it. */
let startedEarly: PipeTransport | undefined;

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
    const pipes = new PipeTransport(write, read);
    if (browserReply) browserReply({ pipes });
    else startedEarly = pipes;
  }
}

/** Asks the host for the worker's browser (it starts one; a browser left running is replaced). */
function requestBrowser(): Promise<PipeTransport> {
  return new Promise((resolve, reject) => {
    if (startedEarly) {
      resolve(startedEarly);
      startedEarly = undefined;
      return;
    }
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
      if (!channel) return reject(new Error("no channel to the service"));
      channel.send(message, (error) => (error ? reject(error) : resolve()));
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

/**
 * Before any run: connects to the browser the host started early and opens and closes a page
 * in a context of its own, so the run finds the connection made and the code that makes pages
 * already run once (a fresh process runs puppeteer's code cold). A function whose code asks for
 * Playwright (see usesPlaywright) gets Playwright loaded, connected and warmed the same way.
 * A browser `kept` from the last run (see hostMain) has made pages before: only the connections
 * are made, which spares the browser a context per run. Then tells the host.
 */
async function warmBrowser(drivers: BrowserDrivers, playwright: boolean, kept: boolean): Promise<void> {
  try {
    const browser = await drivers.getBrowser();
    if (!kept) {
      const context = await browser.createBrowserContext();
      try {
        await context.newPage();
      } finally {
        await context.close();
      }
    }
    if (playwright) {
      const connected = await drivers.getPlaywright();
      if (!kept) {
        const warm = await connected.newContext();
        try {
          await warm.newPage();
        } finally {
          await warm.close();
        }
      }
    }
  } catch {
    // A run that wants the browser finds out for itself.
  }
  send({ type: "browser_warm" });
}

/**
 * The worker's browser for both drivers, over the one pipe the host relays (see CdpMux):
 * connected on first use, and again after the browser went away.
 */
function browserConnection(downloadsDir: string | undefined): BrowserDrivers {
  return browserDrivers({
    openPipe: requestBrowser,
    connectPuppeteer: (transport) => loadPuppeteer().connect({ transport, defaultViewport: null }),
    connectPlaywright: (mux) => connectPlaywright(mux, downloadsDir),
  });
}

/** Log lines a run sends one message each; past them, what one turn of the event loop wrote goes in one message. */
const LOG_LINES_SENT_AT_ONCE = 1000;

/**
 * Sends a run's console output to the service as it is written (the output is capped before it
 * gets here, see captureConsole): each line at once, so that what a run logged right before it
 * crashed or spun in a loop until it was stopped is kept; past LOG_LINES_SENT_AT_ONCE lines,
 * what one turn of the event loop wrote in one message (the service takes a bounded number of
 * messages per run, MAX_LOG_FRAMES_PER_RUN). What waits for its turn's end is sent when the
 * process exits (process.exit() in the code) too.
 */
function logStream(runId: string): (text: string) => void {
  let sentAtOnce = 0;
  let pending: string[] = [];
  const flush = () => {
    if (pending.length === 0) return;
    const batch = pending.join("");
    pending = [];
    send({ type: "log", runId, text: batch });
  };
  process.once("exit", flush);
  return (text) => {
    if (sentAtOnce < LOG_LINES_SENT_AT_ONCE) {
      sentAtOnce++;
      return send({ type: "log", runId, text });
    }
    if (pending.push(text) > 1) return;
    setImmediate(flush);
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

/** Sends one message, resolving once the channel took it. */
function sendNow(message: WorkerMessage): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (!channel) return reject(new Error("no channel to the service"));
    channel.send(message, (error) => (error ? reject(error) : resolve()));
  });
}

/** The profile replies of the run in progress go here. */
let onProfileReply: ((reply: Extract<SupervisorMessage, { type: "profile_reply" }>) => void) | undefined;

function main(): void {
  let init: WorkerInit | undefined;
  let drivers: BrowserDrivers | undefined;
  // The host's token for this process (see takeChannel): kept in this closure only, never
  // passed as an argument (a sloppy-mode caller chain could read a caller's arguments).
  let token = "";
  let served = false;
  /** The live view of the run in progress (screencast while the service says someone watches). */
  let live: { runId: string; screencast: LiveScreencast } | undefined;

  // A prototype-less message: no getter an automation puts on Object.prototype sees it being sent.
  const answer = (runId: string, outcome: RunOutcome) =>
    send(Object.assign(Object.create(null) as WorkerMessage, { type: "done", runId, token, outcome }));

  const serve = async (request: RunRequest): Promise<void> => {
    if (!init || !drivers) {
      const error = { code: "function_error" as const, message: "The worker received a run before init" };
      return answer(request.runId, { status: "failed", error, logs: "", browser_ms: 0 });
    }
    const { code, parameter_style: style, variables } = init;
    const { params, timeoutMs, memoryMb } = request;
    // The run stops itself at its timeout (keeping its logs and its pages' evidence); the
    // supervisor kills the worker only if it does not answer within a grace after it.
    const artifacts = withStorageBudget(artifactChannel(request.runId, request.artifactsUrl), request.storageBytesLeft);
    const downloadsDir = init.downloads_dir;
    const runId = request.runId;
    const screencast = new LiveScreencast((frame) => send({ type: "frame", runId, data: frame.data, url: frame.url, width: frame.width, height: frame.height }));
    live = { runId, screencast };
    const profiles = profileMessages(request.runId, sendNow);
    onProfileReply = profiles.onReply;
    const run = startInvocation({
      code,
      params,
      style,
      variables,
      getBrowser: drivers.getBrowser,
      getPlaywright: drivers.getPlaywright,
      newPlaywright: drivers.newPlaywright,
      openedPages: drivers.openedPages,
      ...(typeof memoryMb === "number" ? { memoryMb } : {}),
      timeoutMs,
      stopAfterMs: timeoutMs,
      artifacts,
      ...(downloadsDir ? { downloadsDir } : {}),
      secrets: request.secrets,
      ...(request.proxy ? { proxy: request.proxy } : {}),
      profiles: profiles.channel,
      onLog: logStream(request.runId),
      ...(request.recording ? { recording: request.recording } : {}),
      onPage: screencast.pageOpened,
      // The host disposes the run's contexts after the answer (resetKeptBrowser, or the browser killed).
      contextsDisposedAfterRun: true,
    });
    // The answer is this process's last word: the host replaces it (and its browser) at once.
    answer(request.runId, await run.outcome);
  };

  try {
    channel = takeChannel((message: SupervisorMessage, handle: unknown) => {
      if (message.type === "init") {
        const problem = init ? "the worker is already initialized" : checkInit(message);
        if (problem) return send({ type: "init_failed", message: problem });
        token = typeof message.token === "string" ? message.token : "";
        // Field by field: the token stays out of the init the runs read.
        init = { type: "init", code: message.code, parameter_style: message.parameter_style, variables: message.variables };
        if (typeof message.downloads_dir === "string") init.downloads_dir = message.downloads_dir;
        drivers = browserConnection(init.downloads_dir);
        return send({ type: "ready" });
      }
      // One run per process: a second one is the host's mistake, and is not served here.
      if (message.type === "run" && !served) {
        served = true;
        void serve(message);
      }
      if (message.type === "live" && live?.runId === message.runId) live.screencast.watch(message.on === true);
      if (message.type === "profile_reply") return onProfileReply?.(message);
      if (message.type === "browser_pipe" || message.type === "browser_failed") {
        onBrowserReply(message, handle);
        if (startedEarly && drivers && !served) void warmBrowser(drivers, usesPlaywright(init?.code ?? ""), message.type === "browser_pipe" && message.kept === true);
      }
      // Into the run's console output (if a run is in progress): why its pages went away.
      if (message.type === "browser_exited") {
        // A browser started early that died before any run used it is no one's loss.
        if (startedEarly) startedEarly = undefined;
        else console.error(`The browser exited (${message.detail})`);
      }
    });
  } catch {
    process.stderr.write("workerMain must be started with an IPC channel\n");
    process.exit(2);
  }
  closeHeapReaders();
  // Stray failures of user code (a promise nobody awaited, a throw in a timer) must not take
  // the worker down before it answers: they go to the console, which is captured during the run.
  process.on("unhandledRejection", (reason) => console.error("Unhandled promise rejection:", reason));
  process.on("uncaughtException", (error) => console.error("Uncaught exception:", error));
  process.on("disconnect", () => process.exit(0));
}

main();
