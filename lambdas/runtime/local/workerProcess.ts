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
  /** The version to serve. */
  init: Omit<WorkerInit, "type">;
  identity: ProcessIdentity;
}

/**
 * One worker process serving one function version, one run at a time, with its own
 * browser, which we launch when its first session asks (so functions that use no browser
 * cost no browser). It runs under Node's permission model (reads only its bundle, no
 * writes, no child processes or threads) with an empty environment.
 */
export class WorkerProcess {
  private pending: { resolve: (outcome: RunOutcome) => void; reject: (error: Error) => void } | null = null;
  private exitReason: string | null = null;
  lastUsed = Date.now();

  private browser: Promise<BrowserProcess> | null = null;
  private browserGroup = -1;

  private constructor(
    private readonly child: ChildProcess,
    private readonly options: WorkerOptions,
  ) {
    child.on("message", (message: WorkerMessage) => {
      if (message.type === "done" && this.pending) {
        const { resolve } = this.pending;
        this.pending = null;
        resolve(message.outcome);
      }
      if (message.type === "browser_request") void this.answerBrowserRequest();
    });
    child.once("exit", (code, signal) => {
      this.exitReason ??= `the worker process exited (${signal ?? `code ${code}`})`;
      this.pending?.reject(new WorkerExit(this.exitReason, "exited"));
      this.pending = null;
      void this.killBrowser();
    });
  }

  static async start(options: WorkerOptions): Promise<WorkerProcess> {
    const child = spawn(
      process.execPath,
      ["--experimental-permission", `--allow-fs-read=${options.bundlePath}`, "--disable-warning=ExperimentalWarning", options.bundlePath],
      { ...options.identity, env: {}, stdio: ["ignore", "ignore", "ignore", "ipc"] },
    );
    const worker = new WorkerProcess(child, options);
    try {
      await new Promise<void>((resolve, reject) => {
        const onMessage = (message: WorkerMessage) => {
          if (message.type === "ready") resolve();
          if (message.type === "init_failed") reject(new Error(`The worker could not load the code: ${message.message}`));
        };
        child.on("message", onMessage);
        child.once("exit", (code) => reject(new Error(`The worker exited during start-up (code ${code})`)));
        child.once("error", reject);
        worker.send({ type: "init", ...options.init });
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
    return { pids: this.child.pid ? [this.child.pid] : [], groups: this.browserGroup > 0 ? [this.browserGroup] : [] };
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
    await this.killBrowser();
  }

  /** Launches the browser on the worker's first request (again if it died) and sends its endpoint. */
  private async answerBrowserRequest(): Promise<void> {
    try {
      let browser = await this.browser?.catch(() => null);
      if (!browser || !browser.alive()) {
        if (browser) await browser.kill();
        this.browser = launchBrowser(this.options.identity, this.options.profileRoot);
        browser = await this.browser;
        this.browserGroup = browser.pid;
      }
      if (!this.alive) return void (await this.killBrowser());
      this.send({ type: "browser", wsEndpoint: browser.wsEndpoint });
    } catch (error) {
      this.browser = null;
      if (this.alive) this.send({ type: "browser_failed", message: (error as Error).message });
    }
  }

  private async killBrowser(): Promise<void> {
    const browser = await this.browser?.catch(() => null);
    this.browser = null;
    await browser?.kill();
  }

  private send(message: SupervisorMessage): void {
    if (this.child.connected) this.child.send(message);
  }
}
