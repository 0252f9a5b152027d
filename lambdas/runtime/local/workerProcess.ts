import { type FrameProblem, FrameReader, type ResultJsonVerdict, encodeFrame } from "../../runner/frames";
import { MAX_JSON_DEPTH, parseRunOutcome, resultTooDeep, resultTooLarge } from "../../runner/outcomeSchema";
import { type CaptureEvidence, type LiveRequest, MAX_FRAME_BYTES, type HostInit, type RunOutcome, type RunRequest, type WorkerInit } from "../../runner/protocol";
import { artifactContentType } from "../../artifacts/artifacts";
import type { ArtifactReceiver } from "./localArtifacts";
import { type Deferred, deferred } from "./deferred";
import { StreamedLogs } from "./streamedLogs";
import { MAX_ARTIFACT_FRAMES_PER_RUN, MAX_FRAMES_PER_RUN, MAX_LOG_FRAMES_PER_RUN, MAX_PROFILE_FRAMES_PER_RUN, type WorkerFrame, parseFrame } from "./workerChannel";
import type { RunProfiles } from "../../profiles/runProfiles";
import { onProfileFrame } from "../../profiles/profileFrames";
import type { RunProxy } from "../../../layers/runtime/sessionProxy";
import type { SandboxedHost } from "./sandbox/sandboxedHost";
import type { RecordingMode } from "../../recording/recordingMode";
import type { ScreenFrame } from "../../live/liveFrames";
import { FrameGate } from "../../live/frameGate";
import type { ResultParser } from "./resultParsing/resultParser";

/** Why a worker ended in the middle of a run. */
export class WorkerExit extends Error {
  constructor(
    message: string,
    readonly reason: "exited" | "killed",
  ) {
    super(message);
  }
}

export interface WorkerOptions {
  /** Starts the worker's sandbox with its host; `release` is called once it is gone. */
  startHost: () => Promise<{ host: SandboxedHost; release: () => void }>;
  /** The version to serve. */
  init: Omit<WorkerInit, "type">;
  /** Parses its big frames (a run's result) off the service's thread, accounts in turn (absent: here). */
  parser?: ResultParser;
}

/** What a run is given besides its parameters. */
export interface RunOptions {
  artifactsUrl: string;
  artifacts?: ArtifactReceiver;
  /** Called each time the run's streamed console output (logsSoFar) grows. */
  onLog?: () => void;
  /** By name: handed to the run (`secrets.get`), and their values redacted from its streamed output. */
  secrets?: Readonly<Record<string, string>>;
  /** Bytes the run's account may still keep (told to the run: its `artifacts.save` refuses past them). */
  storageBytesLeft?: number;
  /** The function's `recording` setting (absent: off). */
  recording?: RecordingMode;
  /** Gets the live view's frames while watchLive(runId, true) holds (each parsed and rate-limited here). */
  onFrame?: (frame: ScreenFrame) => void;
  /** The run's proxy (its password read from the function's secrets), handed to the worker. */
  proxy?: RunProxy;
  /** Where the run's sessions open and save profiles (absent: every open is refused). */
  profiles?: RunProfiles;
  /** Whose run it is: its big frames wait for the parser in that account's turn. */
  account?: string;
}

/** One run in progress: its answer (`done`), then the worker ready again (`idle`, with what the run left running). */
export interface WorkerRun {
  done: Promise<RunOutcome>;
  idle: Promise<{ leftover: string[] }>;
}

const START_TIMEOUT_MS = 30_000;
/** The longest an idle sandbox stays unfrozen while its standby worker starts. */
const STANDBY_FREEZE_MS = 2_000;

type State =
  | { name: "starting"; ready: Deferred<void> }
  | { name: "idle" }
  | {
      name: "running";
      runId: string;
      started: number;
      frames: number;
      logFrames: number;
      artifactFrames: number;
      profileFrames: number;
      profiles: RunProfiles | undefined;
      artifacts: ArtifactReceiver | undefined;
      /** Told each time the streamed console output grows (it reads logsSoFar). */
      onLog: (() => void) | undefined;
      onFrame: ((frame: ScreenFrame) => void) | undefined;
      watched: boolean;
      frameGate: FrameGate;
      done: Deferred<RunOutcome>;
      idle: Deferred<{ leftover: string[] }>;
    }
  | { name: "finishing"; runId: string; frames: number; idle: Deferred<{ leftover: string[] }> }
  | { name: "dead" };

/**
 * One worker serving one function version, one run at a time, in a sandbox of its own with
 * its own browser (started by its host when the first session asks). The service reads
 * nothing from it but frames it parses (workerChannel, parseRunOutcome); a worker that says
 * anything out of turn, too much, or too big is killed. After each answer the sandbox's host
 * replaces the worker process and its browser (hostMain), and says `idle` when a fresh one is
 * ready; between runs the whole sandbox is frozen.
 */
export class WorkerProcess {
  lastUsed = Date.now();
  private state: State = { name: "starting", ready: deferred() };
  private exitReason: string | null = null;
  private killing: Promise<void> | undefined;
  /** The console output of the last run, as streamed while it ran. */
  private readonly logs = new StreamedLogs();
  /** The host's standby worker is starting: an idle sandbox is frozen once it is ready (see onStandby). */
  private standbyStarting = false;
  /** The sandbox is idle and not frozen yet (its standby is starting): frozen at the standby's `ready`, or by this timer. */
  private freezeLater: NodeJS.Timeout | undefined;
  /** The host's word that the evidence of a stuck run is kept (see captureEvidence). */
  private evidenceTaken: { runId: string; done: () => void } | undefined;
  /** Whose the run in progress is, and its secrets' values (for the parser: its turn, the result's redaction). */
  private runOf = { account: "", secrets: [] as readonly string[] };

  private constructor(
    private readonly host: SandboxedHost,
    private readonly release: () => void,
    parser?: ResultParser,
  ) {
    const reader = new FrameReader(
      MAX_FRAME_BYTES,
      (message, resultJson) => this.onFrame(message, resultJson),
      (problem, kind) => this.onUnreadable(problem, kind),
      MAX_JSON_DEPTH,
      parser?.frames(() => this.runOf.account, () => this.runOf.secrets, MAX_JSON_DEPTH),
    );
    host.channel.on("data", (chunk: Buffer) => reader.push(chunk));
    host.channel.on("error", () => undefined);
    void host.exited.then(() => this.onExit(this.exitReason ?? "the worker's sandbox exited"));
  }

  static async start(options: WorkerOptions): Promise<WorkerProcess> {
    const { host, release } = await options.startHost();
    const worker = new WorkerProcess(host, release, options.parser);
    const hello: HostInit = { type: "host_init", worker: { bundle: host.workerBundle }, browser: host.browser, scratchDirs: host.scratchDirs, init: options.init };
    host.channel.write(encodeFrame(hello));
    const timer = setTimeout(() => void worker.kill(`the worker did not start within ${START_TIMEOUT_MS / 1000} s`), START_TIMEOUT_MS);
    try {
      await (worker.state as { ready: Deferred<void> }).ready.promise;
      await host.freeze();
    } catch (error) {
      await worker.kill("start-up failed");
      throw error;
    } finally {
      clearTimeout(timer);
    }
    return worker;
  }

  get alive(): boolean {
    return this.state.name !== "dead" && this.exitReason === null && this.host.alive();
  }

  /** Memory of the worker's whole sandbox (its host, the worker, its browser, its files), in MB (`exactly`: see TreeMeter). */
  memoryMb(exactly = false): Promise<number> {
    return this.host.memoryMb(exactly);
  }

  /** What the sandbox's private file systems hold (MB): after a run, what its host could not empty. */
  filesMb(): number {
    return this.host.filesMb();
  }

  /**
   * What the last run logged, as it was streamed while it ran: what a run that timed out or
   * crashed keeps (a run that answered carries its whole output in its answer).
   */
  get logsSoFar(): string {
    return this.logs.all;
  }

  /** What the run `runId` has logged so far while it is this worker's run ("" before it started here, or once another one has). */
  logsOf(runId: string): string {
    const state = this.state;
    return (state.name === "running" || state.name === "finishing") && state.runId === runId ? this.logs.sent : "";
  }

  /** True when the kernel's memory ceiling of the sandbox was hit (cgroups only). */
  hitMemoryLimit(): Promise<boolean> {
    return this.host.hitMemoryLimit();
  }

  /** Starts one invocation on an idle worker; both promises reject with WorkerExit if the worker dies first. */
  async run(
    runId: string,
    params: Record<string, unknown>,
    timeoutMs: number,
    memoryMb: number,
    options: RunOptions = { artifactsUrl: "" },
  ): Promise<WorkerRun> {
    // A worker that died between being taken and given its run (the service stopping, a kill): the run meets a crashed worker.
    if (this.state.name === "dead") throw new WorkerExit(this.exitReason ?? "the worker had exited", "exited");
    if (this.state.name !== "idle") throw new Error(`A worker runs one invocation at a time (it is ${this.state.name})`);
    const state = {
      name: "running" as const,
      runId,
      started: performance.now(),
      frames: 0,
      logFrames: 0,
      artifactFrames: 0,
      profileFrames: 0,
      profiles: options.profiles,
      artifacts: options.artifacts,
      onLog: options.onLog,
      onFrame: options.onFrame,
      watched: false,
      frameGate: new FrameGate(),
      done: deferred<RunOutcome>(),
      idle: deferred<{ leftover: string[] }>(),
    };
    this.state = state;
    this.runOf = { account: options.account ?? "", secrets: Object.values(options.secrets ?? {}) };
    clearTimeout(this.freezeLater);
    this.freezeLater = undefined;
    // The worker redacts its lines itself; this side does again, for what a run writes around it.
    this.logs.reset(Object.values(options.secrets ?? {}));
    // The kernel's ceiling sits well above the sampled limit: it stops a burst between samples.
    await this.host.limitMemory(memoryMb * 2 + 512);
    await this.host.thaw();
    const request: RunRequest = { type: "run", runId, params, timeoutMs, memoryMb, artifactsUrl: options.artifactsUrl, secrets: { ...options.secrets } };
    if (options.storageBytesLeft !== undefined) request.storageBytesLeft = options.storageBytesLeft;
    if (options.recording !== undefined) request.recording = options.recording;
    if (options.proxy) request.proxy = options.proxy;
    this.host.channel.write(encodeFrame(request));
    return { done: state.done.promise, idle: state.idle.promise };
  }

  /**
   * For a run past its timeout whose worker has not answered (its code blocks the event loop):
   * the sandbox's host stops the worker and keeps what the run's pages show (failure-N.png and
   * .html, their URLs in the log) over the browser's pipe. Resolves when the host says it is
   * done, or after `budgetMs` and a little more; the caller kills the worker then.
   */
  captureEvidence(budgetMs: number, why: CaptureEvidence["why"] = "stuck"): Promise<void> {
    const state = this.state;
    if (state.name !== "running") return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => done(), budgetMs + 500);
      const done = () => {
        clearTimeout(timer);
        this.evidenceTaken = undefined;
        resolve();
      };
      this.evidenceTaken = { runId: state.runId, done };
      const request: CaptureEvidence = { type: "capture_evidence", runId: state.runId, budgetMs, why };
      this.host.channel.write(encodeFrame(request));
    });
  }

  /** Starts (someone watches) or stops the live view of the run `runId`, while it is this worker's run. */
  watchLive(runId: string, on: boolean): void {
    const state = this.state;
    if (state.name !== "running" || state.runId !== runId || state.watched === on) return;
    state.watched = on;
    const request: LiveRequest = { type: "live", runId, on };
    this.host.channel.write(encodeFrame(request));
  }

  /** Kills the worker's whole sandbox; a run in progress rejects with `reason`. */
  kill(reason: string): Promise<void> {
    this.exitReason ??= reason;
    this.fail(new WorkerExit(reason, "killed"));
    this.killing ??= this.host.kill().finally(() => this.release());
    return this.killing;
  }

  private onFrame(message: unknown, resultJson?: ResultJsonVerdict): void {
    const parsed = parseFrame(message);
    if (!parsed.ok) return void this.kill(`the worker broke the protocol: ${parsed.problem}`);
    const frame: WorkerFrame = parsed.frame;
    const state = this.state;
    if (frame.type === "log") return this.onLog(frame.runId, frame.text);
    if (frame.type === "artifact") return this.onArtifact(frame);
    if (frame.type === "frame") return this.onScreenFrame(frame);
    if (frame.type === "profile_open" || frame.type === "profile_save") return this.onProfile(frame);
    if (frame.type === "standby") return this.onStandby(frame.pid, frame.ready);
    if (state.name === "running" || state.name === "finishing") {
      state.frames++;
      if (state.frames > MAX_FRAMES_PER_RUN) return void this.kill("the worker broke the protocol: too many messages in one run");
    }
    switch (frame.type) {
      case "ready":
        if (state.name !== "starting") return void this.kill("the worker broke the protocol: ready out of turn");
        this.state = { name: "idle" };
        return state.ready.resolve();
      case "init_failed":
        if (state.name !== "starting") return void this.kill("the worker broke the protocol: init_failed out of turn");
        state.ready.reject(new Error(`The worker could not load the code: ${frame.message}`));
        return void this.kill("its code could not be loaded");
      case "done": {
        if (state.name !== "running" || frame.runId !== state.runId) return void this.kill("the worker broke the protocol: done out of turn");
        const outcome = parseRunOutcome(frame.outcome, performance.now() - state.started, resultJson);
        if (!outcome.ok) return void this.kill(`the worker broke the protocol: ${outcome.problem}`);
        this.state = { name: "finishing", runId: state.runId, frames: state.frames, idle: state.idle };
        return state.done.resolve(outcome.outcome);
      }
      case "idle":
        if (state.name !== "finishing" || frame.runId !== state.runId) return void this.kill("the worker broke the protocol: idle out of turn");
        this.lastUsed = Date.now();
        if (frame.leftover.length > 0) return state.idle.resolve({ leftover: frame.leftover });
        if (this.standbyStarting) {
          // Nothing of the last run runs (its processes are killed; the worker and the standby
          // have run no code of the function yet): frozen once the standby is ready (onStandby),
          // and at the latest after STANDBY_FREEZE_MS, whatever the host says.
          this.state = { name: "idle" };
          this.freezeLater = setTimeout(() => this.freezeIdle(), STANDBY_FREEZE_MS);
          return state.idle.resolve({ leftover: [] });
        }
        // Frozen before anyone can hand it a run: nothing of the last run runs meanwhile.
        return void this.host.freeze().then(
          () => {
            this.state = { name: "idle" };
            state.idle.resolve({ leftover: [] });
          },
          () => void this.kill("the worker's sandbox could not be frozen"),
        );
      case "worker_exit":
        return void this.kill(`the worker process exited (${frame.signal ?? `code ${frame.code}`})`);
      case "oversize":
        return this.onUnreadable(`a message of ${frame.bytes} bytes is over the limit`, "too_large");
      case "evidence_done":
        // From the host, or forged by the run itself: either way it only ends its own wait early.
        if (this.evidenceTaken?.runId === frame.runId) this.evidenceTaken.done();
        return;
    }
  }

  /**
   * The host's standby worker (pid in the sandbox; 0: none): left out of the sandbox's memory
   * (it holds no run's memory), and, once ready, the idle sandbox is frozen.
   */
  private onStandby(pid: number, ready: boolean): void {
    if (this.state.name === "dead") return;
    this.host.excludeFromMemory(pid);
    this.standbyStarting = !ready;
    if (ready && this.freezeLater !== undefined) this.freezeIdle();
  }

  /** Freezes the idle sandbox whose freeze waited for its standby (see the `idle` frame). */
  private freezeIdle(): void {
    clearTimeout(this.freezeLater);
    this.freezeLater = undefined;
    if (this.state.name !== "idle") return; // a run has it (thawed): nothing to freeze
    void this.host.freeze().catch(() => void this.kill("the worker's sandbox could not be frozen"));
  }

  /** Console output of the run in progress (after its answer, the answer has it all: ignored). */
  private onLog(runId: string, text: string): void {
    const state = this.state;
    if ((state.name !== "running" && state.name !== "finishing") || runId !== state.runId) {
      return void this.kill("the worker broke the protocol: log out of turn");
    }
    if (state.name !== "running") return;
    if (++state.logFrames > MAX_LOG_FRAMES_PER_RUN) return void this.kill("the worker broke the protocol: too many log messages in one run");
    this.logs.push(text);
    // Whoever follows the run live reads the text from here (logsSoFar): the one copy of it.
    try {
      state.onLog?.();
    } catch {
      // A listener's failure is its own; the run goes on.
    }
  }

  /**
   * A part of an artifact of the run in progress, handed to the run's receiver (which enforces
   * the run's caps again); out of turn, or more parts than a run may send, the worker goes.
   */
  private onArtifact(frame: Extract<WorkerFrame, { type: "artifact" }>): void {
    const state = this.state;
    if (state.name !== "running" || frame.runId !== state.runId) return void this.kill("the worker broke the protocol: artifact out of turn");
    if (++state.artifactFrames > MAX_ARTIFACT_FRAMES_PER_RUN) return void this.kill("the worker broke the protocol: too many artifact messages in one run");
    try {
      state.artifacts?.part(frame.name, artifactContentType(frame.name, frame.content_type), Buffer.from(frame.data, "base64"), frame.last);
    } catch (error) {
      // The data dir failed (full disk): the artifact is lost, not the run.
      state.artifacts = undefined;
      void error;
    }
  }

  /** A live-view frame of the run in progress: passed on, field by field, only as watched and as often as FrameGate lets it. */
  private onScreenFrame(frame: Extract<WorkerFrame, { type: "frame" }>): void {
    const state = this.state;
    if (state.name !== "running" || frame.runId !== state.runId) return;
    const verdict = state.frameGate.accept(state.watched, performance.now());
    if (verdict === "flood") return void this.kill("the worker broke the protocol: too many live-view frames");
    if (verdict === "pass") state.onFrame?.({ data: frame.data, url: frame.url, width: frame.width, height: frame.height });
}

  /** A profile message of the run in progress: an open is answered (in parts), a save's part gathered; out of turn, the worker goes. */
  private onProfile(frame: Extract<WorkerFrame, { type: "profile_open" | "profile_save" }>): void {
    const state = this.state;
    if (state.name !== "running" || frame.runId !== state.runId) return void this.kill("the worker broke the protocol: profile message out of turn");
    if (++state.profileFrames > MAX_PROFILE_FRAMES_PER_RUN) return void this.kill("the worker broke the protocol: too many profile messages in one run");
    // An open's answer goes only to the run that asked, while it runs.
    onProfileFrame(frame, state.profiles, (reply) => this.host.channel.write(reply), () => this.state === state);
  }

  /**
   * A message too big or nested too deeply to read (or not JSON): the run in progress fails as
   * result_too_large or result_too_deep (a broken frame as too large), and the worker goes.
   */
  private onUnreadable(problem: string, kind: FrameProblem): void {
    const state = this.state;
    if (state.name === "running") {
      this.state = { name: "finishing", runId: state.runId, frames: state.frames, idle: state.idle };
      state.done.resolve({ status: "failed", error: kind === "too_deep" ? resultTooDeep() : resultTooLarge(), logs: this.logs.sent, browser_ms: 0 });
    }
    void this.kill(`the worker sent ${kind === "too_deep" ? "a message nested too deeply" : "too much"}: ${problem}`);
  }

  private onExit(reason: string): void {
    this.exitReason ??= reason;
    this.fail(new WorkerExit(this.exitReason, "exited"));
    this.killing ??= this.host.kill().finally(() => this.release());
  }

  private fail(error: WorkerExit): void {
    clearTimeout(this.freezeLater);
    this.freezeLater = undefined;
    const state = this.state;
    this.state = { name: "dead" };
    if (state.name === "starting") state.ready.reject(error);
    if (state.name === "running") {
      state.done.reject(error);
      state.idle.reject(error);
    }
    if (state.name === "finishing") state.idle.reject(error);
  }
}
