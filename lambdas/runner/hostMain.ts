/**
 * Entry of a worker's sandbox host (bundled into host.cjs by buildWorkerBundle): the one
 * process of a sandbox that runs no user code. It starts the worker (user code, under Node's
 * permission model: no child processes, no files but its bundle) and, when the worker asks,
 * the worker's one browser, whose CDP pipe ends it hands to the worker: no DevTools endpoint
 * listens on any socket. It talks to the service over fd 3 in length-prefixed frames.
 *
 * A worker process serves ONE run. When it answers, the host kills it at once, keeps its
 * browser only if the run left it clean and resets it (browserReuse/: else it is killed too, and
 * the next session gets a fresh browser on an emptied profile), hands the next worker a socket
 * of its own on the browser's pipe, and says `idle` when that one is ready: nothing a run did
 * to its process (listeners on the
 * channel, a patched send, timers, unref'd or not, globals, patched builtins, module state)
 * can reach the next run, and no run's own code lingers after its answer. The service's
 * channel (fd 3 here) is out of the worker's reach; what the worker says is relayed only if a
 * worker may say it (`done` once, with the token given to that process in `init`; its `log`
 * and `artifact` parts until then); `ready`, `idle` and the rest are the host's alone to say.
 *
 * The next run's worker is started ahead, as a standby (see ensureStandby): a process that has
 * loaded the runtime and parsed the code but runs none of it until it is given a run, so a run
 * answered is replaced at once. It is started after the run it follows began (never before: it
 * holds nothing of any run, and the sandbox is one function version's, one account's). The host
 * says when it starts and when it is ready (`standby`): the service leaves it out of the run's
 * memory, and freezes an idle sandbox only once its standby is ready, so the freeze does not
 * stop it half-started.
 *
 * The service treats everything this process says as untrusted (it shares a sandbox and a
 * user with user code); what this process guarantees is for the sandbox's own sake: one
 * browser at a time, launched only here, and nothing left when the worker or the service goes.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { Socket } from "node:net";
import path from "node:path";
import { artifactMessages } from "./artifactMessages";
import { htmlForms } from "../secrets/htmlForms";
import { Redactor } from "../secrets/redactor";
import { emptyScratch } from "./emptyScratch";
import { captureStuckPages } from "./hostEvidence";
import { CdpRelay } from "./cdpRelay";
import { resetKeptBrowser } from "./browserReuse/resetKeptBrowser";
import { keepTail } from "./streamTail";
import { FrameReader, encodeFrame } from "./frames";
import type { CaptureEvidence, HostInit, HostMessage, SupervisorMessage, WorkerMessage } from "./protocol";
import { MAX_FRAME_BYTES } from "./protocol";

const channel = new Socket({ fd: 3, readable: true, writable: true });
interface WorkerState {
  token: string;
  ready: boolean;
  answered: boolean;
}
/** The current worker process, and what the host knows of it. */
let worker: ChildProcess | undefined;
let workerState: WorkerState = { token: "", ready: false, answered: false };
/** The next run's worker, started ahead (see ensureStandby); it gets no message but `init` until it is the current one. */
let standby: { child: ChildProcess; state: WorkerState } | undefined;
/** The service has heard `ready` (from the first worker; later ones make the host say `idle`). */
let readyTold = false;
/** The run whose worker was replaced: `idle` for it once the fresh worker is ready. */
let idleFor: string | undefined;
/** That run used a browser: the fresh worker gets one started before `idle` (as a reused one had it warm). */
let browserEarly = false;
/** Told when the fresh worker says its early browser is warm (see warmBrowser in workerMain). */
let onWarm: (() => void) | undefined;
/** The longest `idle` waits for a warm browser: past it the run warms it itself. */
const WARM_WAIT_MS = 5_000;
let spec: HostInit | undefined;
let browser: ChildProcess | undefined;
let launching = false;
/** The worker a launch under way is for; `relaunch`: another worker asked meanwhile. */
let launchingFor: ChildProcess | undefined;
let relaunch = false;
/** The current browser's CDP pipe, as the host relays it (see CdpRelay). */
let relay: CdpRelay | undefined;
/** The end of the last run: its browser reset and kept, or killed, and the scratch emptied (see keepOrDrop). */
let resetting: Promise<void> = Promise.resolve();
/** The run the worker was last handed: its id, and its secrets (redacted from evidence taken here). */
let currentRun: { runId: string; secrets: string[] } | undefined;

function tell(message: HostMessage | WorkerMessage): void {
  const frame = encodeFrame(message);
  // The worker's messages are user code's to forge: one too big to pass is named, not sent.
  channel.write(frame.length - 4 > MAX_FRAME_BYTES ? encodeFrame({ type: "oversize", bytes: frame.length - 4 }) : frame);
}

function stopAll(code: number): never {
  for (const child of [browser, worker, standby?.child]) {
    // Only while it runs: once reaped, its pid may be another process's.
    if (child?.pid && child.exitCode === null && child.signalCode === null) killQuietly(child.pid);
  }
  process.exit(code);
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // gone already
  }
}

/**
 * Starts a worker process and sends it `init`, as the current worker or as the standby (see
 * ensureStandby). Until it is the current worker, what it says is dropped but its `ready`.
 */
function spawnWorker(init: HostInit): { child: ChildProcess; state: WorkerState } {
  const { bundle } = init.worker;
  // What the browser downloads lands here (cdpDownloads keeps every download here): the worker
  // may read it, to keep it as an artifact, and nothing else of the profile.
  const downloads = downloadsDir(init);
  mkdirSync(downloads, { recursive: true });
  const child = spawn(
    process.execPath,
    // One flag per path: Node 20 reads a comma-separated list as one path.
    ["--experimental-permission", `--allow-fs-read=${bundle}`, `--allow-fs-read=${path.join(path.dirname(bundle), "playwright-core.cjs")}`, `--allow-fs-read=${downloads}/*`, "--disable-warning=ExperimentalWarning", bundle],
    { env: {}, stdio: ["ignore", "ignore", "ignore", "ipc"] },
  );
  // A token per process: its `done` must carry it (code of the process can write on the channel, see takeChannel).
  const state: WorkerState = { token: randomBytes(32).toString("base64url"), ready: false, answered: false };
  child.on("message", (message: unknown) => {
    if (child === worker) fromWorker(message);
    else if (child === standby?.child) fromStandby(message);
  });
  child.once("exit", (code, signal) => {
    if (child === standby?.child) {
      // A standby that died (killed by a run of the same sandbox, say) is only started again: no run was its.
      standby = undefined;
      return tell({ type: "standby", pid: 0, ready: true });
    }
    if (child !== worker) return; // a worker replaced after its run
    tell({ type: "worker_exit", code, signal });
    stopAll(1);
  });
  child.send({ type: "init", ...init.init, downloads_dir: downloads, token: state.token });
  return { child, state };
}

function startWorker(init: HostInit): void {
  const started = spawnWorker(init);
  worker = started.child;
  workerState = started.state;
}

/**
 * Starts the standby, unless there is one: called when a run starts and when one is replaced,
 * so a run's answer finds its successor started (a run never waits for a process to start
 * unless runs come faster than processes start). It holds no run's state: it starts after the
 * run it follows began, runs none of the function's code before its own run (the code is
 * only parsed, see checkInit in workerMain). It is in the sandbox's process group: the
 * service's freeze, its kill and the sandbox's cgroup reach it as they reach the others.
 */
function ensureStandby(): void {
  if (!spec || standby) return;
  standby = spawnWorker(spec);
  const pid = standby.child.pid;
  if (pid === undefined) {
    standby = undefined;
    // None: the process the service left out before is the current worker now, and counts.
    return tell({ type: "standby", pid: 0, ready: true });
  }
  tell({ type: "standby", pid, ready: false });
}

/** What the standby says: only `ready` counts (and a failed start ends it: the next replacement starts one). */
function fromStandby(sent: unknown): void {
  const message = sent as WorkerMessage;
  const next = standby;
  if (!next) return;
  if (message?.type === "ready" && !next.state.ready) {
    next.state.ready = true;
    tell({ type: "standby", pid: next.child.pid ?? 0, ready: true });
  } else if (message?.type === "init_failed") {
    standby = undefined;
    if (next.child.pid) killQuietly(next.child.pid);
    tell({ type: "standby", pid: 0, ready: true });
  }
}

/** What the current worker says: only what a worker may say, in its turn; the rest is dropped. */
function fromWorker(sent: unknown): void {
  const message = sent as WorkerMessage;
  switch (message?.type) {
    case "browser_request":
      return void launchBrowser();
    case "ready":
      if (workerState.ready) return;
      workerState.ready = true;
      return onReady();
    case "browser_warm":
      return onWarm?.();
    case "init_failed":
      if (!workerState.ready) tell({ type: "init_failed", message: String(message.message) });
      return;
    case "done": {
      const run = currentRun;
      // A `done` without this process's token is its automation's, not the runtime's: dropped.
      if (!run || workerState.answered || message.token !== workerState.token || message.runId !== run.runId) return;
      workerState.answered = true;
      tell({ type: "done", runId: run.runId, outcome: message.outcome });
      return replaceWorker(run.runId, message.outcome);
    }
    case "log":
    case "artifact":
    case "frame":
    case "profile_open":
    case "profile_save":
      if (currentRun && !workerState.answered) tell(message);
      return;
    default:
      return;
  }
}

/** The current worker is ready: the first one says `ready`; one that replaced a run's worker says `idle` (its browser warm first, when the run used one). */
function onReady(): void {
  if (idleFor !== undefined) {
    const runId = idleFor;
    idleFor = undefined;
    const early = browserEarly;
    browserEarly = false;
    // The last run's browser, kept and reset, or a fresh one: warm before `idle`, as the run will use one.
    const warm = resetting.then(() => (early ? (relay && !relay.closed && browser ? handKeptBrowser() : launchBrowser()).then(warmed) : undefined));
    void warm.then(() => tell({ type: "idle", runId, leftover: [] }));
  } else if (!readyTold) {
    readyTold = true;
    tell({ type: "ready" });
  }
}

/** Resolves when the worker says its browser is warm, or after WARM_WAIT_MS; at once without a browser. */
function warmed(): Promise<void> {
  if (!relay) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, WARM_WAIT_MS);
    function done() {
      clearTimeout(timer);
      onWarm = undefined;
      resolve();
    }
    onWarm = done;
  });
}

/**
 * After a run's answer: its worker is killed (nothing of the run's code runs on), its browser
 * reset and kept if it is clean, else killed (see keepOrDrop), the standby becomes the worker
 * for the next run (or a fresh one starts), and a new standby starts; `idle` is said once the
 * worker is ready (with the kept browser's pipe, or a fresh browser, warm when the run used one).
 */
function replaceWorker(runId: string, outcome: unknown): void {
  const old = worker;
  worker = undefined;
  currentRun = undefined;
  if (old?.pid && old.exitCode === null && old.signalCode === null) killQuietly(old.pid);
  browserEarly = browser !== undefined || launching;
  const scratch = spec;
  // Nothing the run wrote to the sandbox's file systems is there for the next run (or held in memory).
  resetting = keepOrDrop(outcome).then(() => {
    if (scratch) emptyScratch([...scratch.scratchDirs, downloadsDir(scratch)], [scratch.browser.profileDir]);
  });
  idleFor = runId;
  if (!spec) return;
  // The standby takes over at once; without one (it died, or runs come faster than processes start), a fresh process.
  const next = standby;
  standby = undefined;
  if (next && next.child.connected && next.child.exitCode === null && next.child.signalCode === null) {
    worker = next.child;
    workerState = next.state;
  } else {
    if (next?.child.pid) killQuietly(next.child.pid);
    startWorker(spec);
  }
  // Its successor is named to the service before `idle` (the one it named before is the current worker now).
  ensureStandby();
  if (workerState.ready) onReady();
}

/**
 * The browser of a run that answered: reset and kept for the next run when resetKeptBrowser
 * finds it clean, else killed. A launch still under way is the replaced worker's: it kills its
 * own browser (see launchBrowser).
 */
async function keepOrDrop(outcome: unknown): Promise<void> {
  const link = relay;
  const child = browser;
  if (!link || !child?.pid || launching || child.exitCode !== null || child.signalCode !== null) return dropBrowser();
  const unfit = await resetKeptBrowser(link, child.pid, outcome).catch((error: unknown) => `its reset failed: ${String(error)}`);
  if (unfit === undefined && browser === child && relay === link && !link.closed) return;
  if (browser === child) dropBrowser();
  else if (child.exitCode === null && child.signalCode === null) killQuietly(child.pid);
}

/** Gives the current worker a socket of its own on the kept browser's pipe (a fresh browser if that fails). */
async function handKeptBrowser(): Promise<void> {
  const link = relay;
  const owner = worker;
  if (!link || !owner?.connected) return;
  try {
    const end = await link.connectWorker();
    if (worker !== owner || relay !== link || !owner.connected) return void end.destroy();
    owner.send({ type: "browser_pipe", end: "both", kept: true }, end);
  } catch {
    dropBrowser();
    return launchBrowser();
  }
}

/** Kills the current browser (a launch under way for a replaced worker kills its own, see launchBrowser). */
function dropBrowser(): void {
  const old = browser;
  browser = undefined;
  relay = undefined;
  if (old?.pid && old.exitCode === null && old.signalCode === null) killQuietly(old.pid);
}

function downloadsDir(init: HostInit): string {
  return path.join(init.browser.profileDir, "Downloads");
}

/** Empties the browser profile (a killed browser leaves its lock and state behind), keeping an empty Downloads. */
function freshProfile(dir: string): void {
  mkdirSync(dir, { recursive: true });
  for (const entry of readdirSync(dir)) rmSync(path.join(dir, entry), { recursive: true, force: true });
  mkdirSync(path.join(dir, "Downloads"));
}

/**
 * Starts the worker's browser and sends the worker one end of a socket relayed to the
 * browser's CDP pipe (with `guard`, each command passes guardCommand on its way). One at a time: a
 * request while one starts is answered by that start; a request while one runs means the
 * worker lost its connection, so that browser is killed first. No second browser can be alive
 * or starting.
 */
function launchBrowser(): Promise<void> {
  if (launching) {
    // A fresh worker asks while a launch for the replaced one is under way: its turn comes next.
    if (launchingFor !== worker) relaunch = true;
    return Promise.resolve();
  }
  if (!spec || !worker?.connected) return Promise.resolve();
  launching = true;
  relaunch = false;
  const owner = worker;
  launchingFor = owner;
  const previous = browser;
  browser = undefined;
  relay = undefined;
  const start = async () => {
    const current = spec as HostInit;
    try {
      freshProfile(current.browser.profileDir);
      const child = spawn(
        current.browser.executable,
        // No start page: a page of the default context would outlive the runs (see browserReuse/browserJudge).
        [...current.browser.args, "--remote-debugging-pipe", `--user-data-dir=${current.browser.profileDir}`],
        { env: current.browser.env, stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"] },
      );
      browser = child;
      // The end of what it printed, for the run's log if it dies on its own.
      const stderr = keepTail(child.stderr);
      child.once("exit", (code, signal) => {
        if (browser !== child) return; // replaced or killed on purpose
        browser = undefined;
        relay = undefined;
        if (worker?.connected) worker.send({ type: "browser_exited", detail: `${signal ?? `code ${code}`}: ${stderr()}` });
      });
      const [, , , toBrowser, fromBrowser] = child.stdio as [unknown, unknown, unknown, Socket | null, Socket | null];
      if (!toBrowser || !fromBrowser || worker !== owner || !owner.connected) throw new Error("the browser's pipes are missing");
      const link = new CdpRelay(toBrowser, fromBrowser, current.browser.profileDir, downloadsDir(current), current.browser.guard);
      const workerEnd = await link.connectWorker();
      // Its worker was replaced meanwhile: this browser is no one's.
      if (worker !== owner) {
        if (browser === child) dropBrowser();
        else if (child.exitCode === null && child.signalCode === null) killQuietly(child.pid as number);
        return;
      }
      relay = link;
      owner.send({ type: "browser_pipe", end: "both" }, workerEnd);
    } catch (error) {
      if (worker === owner && owner.connected) owner.send({ type: "browser_failed", message: (error as Error).message });
    } finally {
      launching = false;
      launchingFor = undefined;
      if (relaunch) {
        relaunch = false;
        void launchBrowser();
      }
    }
  };
  if (previous && previous.exitCode === null && previous.signalCode === null) {
    const last = previous;
    const started = new Promise<void>((resolve) => last.once("exit", () => void start().then(resolve)));
    killQuietly(last.pid as number);
    return started;
  }
  return start();
}

/**
 * The service's last word on a run whose worker stopped answering past its timeout: the worker
 * is stopped (SIGSTOP: it runs no more code), the host takes over the browser's pipe and keeps
 * what the run's pages show as the run's artifacts and log, within the budget, then says
 * `evidence_done`. The service kills the sandbox after it (or after the budget, whichever first).
 */
async function captureEvidence(request: CaptureEvidence): Promise<void> {
  const run = currentRun;
  try {
    if (!run || run.runId !== request.runId) return;
    if (worker?.pid && worker.exitCode === null && worker.signalCode === null) process.kill(worker.pid, "SIGSTOP");
    const link = relay;
    if (!link || !browser) return;
    link.takeOver();
    const redactor = new Redactor(run.secrets.flatMap(htmlForms));
    const { files, log } = await captureStuckPages(link.toBrowser, link.fromBrowser, request.budgetMs, (html) => redactor.text(html), request.why);
    for (const file of files) {
      for (const message of artifactMessages(run.runId, file.name, file.contentType, file.bytes)) tell(message);
    }
    if (log.length > 0) tell({ type: "log", runId: run.runId, text: `${log.join("\n")}\n` });
  } catch {
    // Evidence is a courtesy: the run ends as timed out either way.
  } finally {
    tell({ type: "evidence_done", runId: request.runId });
  }
}

const reader = new FrameReader(
  MAX_FRAME_BYTES,
  (message) => {
    const sent = message as SupervisorMessage | HostInit | CaptureEvidence;
    if (sent.type === "host_init") {
      if (spec) return;
      spec = sent;
      startWorker(sent);
      return;
    }
    if (sent.type === "capture_evidence") return void captureEvidence(sent);
    if (sent.type === "run") currentRun = { runId: sent.runId, secrets: Object.values(sent.secrets) };
    if (worker?.connected) worker.send(sent);
    // The next run's worker starts beside this run (the first run's too: none was started before any run began).
    if (sent.type === "run") setImmediate(ensureStandby);
  },
  () => stopAll(1),
);
channel.on("data", (chunk: Buffer) => reader.push(chunk));
channel.on("close", () => stopAll(0));
channel.on("error", () => stopAll(1));
process.on("SIGTERM", () => stopAll(0));
