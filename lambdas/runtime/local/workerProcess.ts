import { type ChildProcess, spawn } from "node:child_process";
import type { RunOutcome, SupervisorMessage, WorkerInit, WorkerMessage } from "../../runner/protocol";
import { type BrowserProcess, launchBrowser } from "./browserProcess";
import type { ProcessIdentity } from "./unprivilegedUser";

/** Why a worker process ended in the middle of a run. */
export class WorkerExit extends Error {
  constructor(
    message: string,
    readonly reason: "exited" | "killed",
  ) {
    super(message);
  }
}

export interface WorkerOptions {
  bundlePath: string;
  profileRoot: string;
  /** The version to serve (everything of the init message but the browser). */
  init: Omit<WorkerInit, "type" | "browserWSEndpoint">;
  identity: ProcessIdentity;
}

/**
 * One worker process serving one function version, one run at a time, with its own
 * browser launched by us. It runs under Node's permission model (reads only its bundle,
 * no writes, no child processes or threads) with an empty environment.
 */
export class WorkerProcess {
  private pending: { resolve: (outcome: RunOutcome) => void; reject: (error: Error) => void } | null = null;
  private exitReason: string | null = null;
  lastUsed = Date.now();

  private constructor(
    private readonly child: ChildProcess,
    private readonly browser: BrowserProcess,
  ) {
    child.on("message", (message: WorkerMessage) => {
      if (message.type === "done" && this.pending) {
        const { resolve } = this.pending;
        this.pending = null;
        resolve(message.outcome);
      }
    });
    child.once("exit", (code, signal) => {
      this.exitReason ??= `the worker process exited (${signal ?? `code ${code}`})`;
      this.pending?.reject(new WorkerExit(this.exitReason, "exited"));
      this.pending = null;
      void this.browser.kill();
    });
  }

  static async start(options: WorkerOptions): Promise<WorkerProcess> {
    const browser = await launchBrowser(options.identity, options.profileRoot);
    const child = spawn(
      process.execPath,
      ["--experimental-permission", `--allow-fs-read=${options.bundlePath}`, "--disable-warning=ExperimentalWarning", options.bundlePath],
      { ...options.identity, env: {}, stdio: ["ignore", "ignore", "ignore", "ipc"] },
    );
    const worker = new WorkerProcess(child, browser);
    try {
      await new Promise<void>((resolve, reject) => {
        const onMessage = (message: WorkerMessage) => {
          if (message.type === "ready") resolve();
          if (message.type === "init_failed") reject(new Error(`The worker could not load the code: ${message.message}`));
        };
        child.on("message", onMessage);
        child.once("exit", (code) => reject(new Error(`The worker exited during start-up (code ${code})`)));
        child.once("error", reject);
        worker.send({ type: "init", ...options.init, browserWSEndpoint: browser.wsEndpoint });
      });
    } catch (error) {
      await worker.kill("start-up failed");
      throw error;
    }
    return worker;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null && this.exitReason === null;
  }

  /** The processes to watch for memory: the worker, and the browser's process group. */
  get memoryScope(): { pids: number[]; groups: number[] } {
    return { pids: this.child.pid ? [this.child.pid] : [], groups: this.browser.pid > 0 ? [this.browser.pid] : [] };
  }

  /** Runs one invocation; rejects with WorkerExit when the process dies or is killed meanwhile. */
  run(runId: string, params: Record<string, unknown>, timeoutMs: number): Promise<RunOutcome> {
    if (this.pending) throw new Error("A worker runs one invocation at a time");
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.send({ type: "run", runId, params, timeoutMs });
    }).finally(() => {
      this.lastUsed = Date.now();
    }) as Promise<RunOutcome>;
  }

  /** Kills the worker and its browser; a run in progress rejects with `reason`. */
  async kill(reason: string): Promise<void> {
    this.exitReason ??= reason;
    if (this.pending) {
      this.pending.reject(new WorkerExit(reason, "killed"));
      this.pending = null;
    }
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise((resolve) => this.child.once("exit", resolve));
      this.child.kill("SIGKILL");
      await exited;
    }
    await this.browser.kill();
  }

  private send(message: SupervisorMessage): void {
    this.child.send(message);
  }
}
