import { Worker } from "node:worker_threads";
import type { CompiledCode, Warning } from "../compileCode";
import { ApiError } from "../../http/errors";
import { type AnalysisOp, type AnalysisReply, compiledFromJson, warningsFromJson } from "./analysisProtocol";
import type { AnalysisBudget, CodeAnalysis } from "./codeAnalysis";
import { type AnalysisWorkerScript, WORKER_BOOTSTRAP } from "./analysisWorkerScript";
import { FairQueue } from "./fairQueue";
import { threadCpuMs } from "./threadCpu";
import type { CpuShares } from "../../runtime/local/cpuShares/cpuShares";

export interface AnalysisPoolOptions {
  script: AnalysisWorkerScript;
  budget: AnalysisBudget;
  /** Worker threads at most; an account has one at a time. */
  maxWorkers: number;
  /** A worker beyond the first ends after this long without work (default 60 s). */
  idleMs?: number;
  log: (line: string) => void;
}

interface Job {
  id: number;
  op: AnalysisOp;
  source: string;
  account: string;
  resolve(json: string): void;
  reject(error: Error): void;
}

interface Slot {
  worker: Worker;
  state: "starting" | "idle" | "busy";
  job?: Job;
  budgetTimer?: NodeJS.Timeout;
  /** The worker's Linux thread id (its CPU time is what the budget counts); null: wall-clock time. */
  threadId: number | null;
  idleTimer?: NodeJS.Timeout;
  /** Said `ready` once: a worker that dies before that is not started again by itself. */
  wasReady: boolean;
  /** Its thread's moves between CPU shares, one after the other. */
  moves: Promise<unknown>;
  /** A starved reading's thread out of its account's share (toAccount). */
  uncharge?: () => Promise<void>;
}

const DEFAULT_IDLE_MS = 60_000;
/** A reading in the background that got less than `share` of a core in its first `afterMs` goes on in the foreground. */
const STARVED = { afterMs: 1_000, share: 0.25 };
/** How often a reading's CPU time is looked at. */
const CHECK_MS = 100;
/** A reading ends after this many times the budget's time in all, whatever CPU it got. */
export const WALL_FACTOR = 6;

/**
 * CodeAnalysis on worker threads: each reads one module at a time, warm (the compiler stays
 * loaded between deploys), with its heap capped at the budget's memory and each module's time
 * capped at the budget's timeout (CPU time of its thread on Linux, see watchBudget); a worker
 * past either is ended (and one is started again), and
 * the deploy fails with 400 `invalid_code`. The thread that serves requests only passes the
 * source in and reads the answer's JSON back. Waiting deploys take turns by account (FairQueue),
 * and an account has at most one worker at a time: one tenant's hostile modules hold up at most
 * one worker, for at most the budget each.
 */
export class AnalysisPool implements CodeAnalysis {
  private readonly slots: Slot[] = [];
  private readonly waiting = new FairQueue<Job>();
  private readonly running = new Set<string>();
  private nextId = 1;
  private closed = false;

  private cpu: CpuShares | undefined;

  constructor(private readonly options: AnalysisPoolOptions) {}

  /**
   * From now on a deploy is read in the background (CpuShares.background): its reading takes
   * only CPU that nothing else (a run, a request) wants, whoever deploys; a reading that gets
   * too little of it to go on (STARVED) goes on in the deploying account's share (CpuShares.charge),
   * as the account's runs do, until it ends.
   */
  inBackground(cpu: CpuShares): void {
    this.cpu = cpu;
  }

  /** A reader's thread into the background (a move that fails leaves it where it is, at nice 10). */
  private toBackground(threadId: number): void {
    this.cpu?.background(threadId).catch((error: unknown) => this.options.log(`deploy analysis thread ${threadId}: not moved to the background (${(error as Error).message})`));
  }

  /** A starved reading's thread into its account's share until the reading ends (release). */
  private toAccount(slot: Slot, threadId: number, job: Job): void {
    const cpu = this.cpu;
    if (!cpu) return;
    const charged = slot.moves.then(() => cpu.charge(job.account, threadId));
    slot.moves = charged.then(
      (uncharge) => {
        // Ended meanwhile: back at once.
        if (slot.job === job) slot.uncharge = uncharge;
        else return uncharge();
      },
      (error: unknown) => this.options.log(`deploy analysis thread ${threadId}: not moved to account ${job.account}'s share (${(error as Error).message})`),
    );
  }

  async compile(source: string, account: string): Promise<CompiledCode> {
    return compiledFromJson(await this.submit("compile", source, account));
  }

  async warnings(source: string, account: string): Promise<Warning[]> {
    return warningsFromJson(await this.submit("warnings", source, account));
  }

  /** Workers now, and deploys under way or waiting (the tests and the start-up line read it). */
  get size(): { workers: number; running: number; waiting: number } {
    return { workers: this.slots.length, running: this.running.size, waiting: this.waiting.size };
  }

  async close(): Promise<void> {
    this.closed = true;
    const closing = new Error("The service is closing; deploy again");
    for (const job of this.waiting.drain()) job.reject(closing);
    const slots = this.slots.splice(0);
    for (const slot of slots) this.release(slot)?.reject(closing);
    await Promise.all(slots.map((slot) => slot.worker.terminate()));
  }

  private submit(op: AnalysisOp, source: string, account: string): Promise<string> {
    if (this.closed) return Promise.reject(new Error("The service is closing; deploy again"));
    return new Promise<string>((resolve, reject) => {
      this.waiting.push(account, { id: this.nextId++, op, source, account, resolve, reject });
      this.pump();
    });
  }

  /** Hands waiting deploys to idle workers, and starts workers for those no idle one can take. */
  private pump(): void {
    if (this.closed) return;
    for (;;) {
      const idle = this.slots.find((slot) => slot.state === "idle");
      if (!idle) break;
      const job = this.waiting.take((account) => !this.running.has(account));
      if (!job) break;
      this.run(idle, job);
    }
    const startable = this.waiting.accounts((account) => !this.running.has(account));
    const starting = this.slots.filter((slot) => slot.state === "starting").length;
    for (let n = starting; n < startable && this.slots.length < this.options.maxWorkers; n++) this.start();
  }

  private start(): Slot {
    const { script, budget } = this.options;
    const worker = new Worker(WORKER_BOOTSTRAP, {
      eval: true,
      workerData: { entry: script.entry, register: script.register },
      // The service's own flags (an inspector, a test runner's) are not the worker's.
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: budget.memoryMb },
    });
    worker.unref(); // an idle worker keeps no process alive
    const slot: Slot = { worker, state: "starting", wasReady: false, threadId: null, moves: Promise.resolve() };
    this.slots.push(slot);
    worker.on("message", (reply: AnalysisReply) => this.onReply(slot, reply));
    worker.on("error", (error: Error & { code?: string }) => this.onGone(slot, error));
    worker.on("exit", (code) => this.onGone(slot, new Error(`the analysis worker exited (code ${code})`)));
    return slot;
  }

  private run(slot: Slot, job: Job): void {
    clearTimeout(slot.idleTimer);
    slot.state = "busy";
    slot.job = job;
    this.running.add(job.account);
    if (this.cpu && slot.threadId !== null) {
      const threadId = slot.threadId;
      slot.moves = slot.moves.then(() => this.toBackground(threadId));
    }
    this.watchBudget(slot);
    slot.worker.postMessage({ id: job.id, op: job.op, source: job.source });
  }

  /**
   * Ends the deploy's reading once its worker thread has used the budget's time in CPU (Linux:
   * a slower reading on a busy machine is not a failed one), or WALL_FACTOR times that in all;
   * without a thread id, once the budget's time has passed.
   */
  private watchBudget(slot: Slot): void {
    const { timeoutMs } = this.options.budget;
    const threadId = slot.threadId;
    const cpuAtStart = threadId === null ? null : threadCpuMs(threadId);
    if (threadId === null || cpuAtStart === null) {
      slot.budgetTimer = setTimeout(() => this.stop(slot, "time"), timeoutMs);
      return;
    }
    const started = performance.now();
    let background = this.cpu !== undefined;
    const check = () => {
      const cpu = threadCpuMs(threadId);
      const overCpu = cpu !== null && cpu - cpuAtStart >= timeoutMs;
      const wall = performance.now() - started;
      if (overCpu || wall >= timeoutMs * WALL_FACTOR) return this.stop(slot, "time");
      // Starved in the background (the machine busy with runs and requests): read in the account's share for the rest.
      if (background && cpu !== null && wall >= STARVED.afterMs && cpu - cpuAtStart < wall * STARVED.share && slot.job) {
        background = false;
        this.toAccount(slot, threadId, slot.job);
      }
      slot.budgetTimer = setTimeout(check, Math.min(CHECK_MS, timeoutMs));
    };
    slot.budgetTimer = setTimeout(check, Math.min(CHECK_MS, timeoutMs));
  }

  private onReply(slot: Slot, reply: AnalysisReply): void {
    if (reply.type === "ready") {
      slot.wasReady = true;
      slot.threadId = reply.threadId;
      this.becomeIdle(slot);
      return;
    }
    const job = slot.job;
    if (!job || reply.id !== job.id) return;
    this.release(slot);
    if (reply.type === "answer") job.resolve(reply.json);
    else if (reply.type === "rejected") job.reject(new ApiError(reply.code, reply.message, reply.details));
    else job.reject(new Error(`analysing the code failed: ${reply.message}`));
    this.becomeIdle(slot);
  }

  /** Ends a worker whose module went past the budget; its deploy fails with invalid_code. */
  private stop(slot: Slot, budget: "time" | "memory"): void {
    const job = this.release(slot);
    this.remove(slot);
    void slot.worker.terminate();
    if (job) {
      this.options.log(`deploy analysis stopped: account ${job.account}'s code went past its ${budget} budget`);
      job.reject(overBudget(this.options.budget, budget));
    }
    this.replace(slot);
  }

  /** A worker that failed or exited: its deploy (if any) fails, and the pool carries on without it. */
  private onGone(slot: Slot, error: Error & { code?: string }): void {
    if (!this.slots.includes(slot)) return;
    if (error.code === "ERR_WORKER_OUT_OF_MEMORY" && slot.job) {
      this.stop(slot, "memory");
      return;
    }
    const job = this.release(slot);
    this.remove(slot);
    void slot.worker.terminate();
    this.options.log(`deploy analysis worker failed: ${error.message}`);
    const failure = new Error(`the analysis worker failed: ${error.message}`);
    if (job) job.reject(failure);
    else if (!slot.wasReady && !this.slots.some((other) => other.wasReady)) {
      // It never started: what waits for one would wait for ever.
      for (const waiting of this.waiting.drain()) waiting.reject(failure);
    }
    this.replace(slot);
  }

  /** After a worker was ended: one is started again when none is left (a warm one for the next deploy) or deploys wait. */
  private replace(gone: Slot): void {
    if (this.closed) return;
    if (gone.wasReady && this.slots.length === 0) this.start();
    this.pump();
  }

  private becomeIdle(slot: Slot): void {
    slot.state = "idle";
    this.pump();
    if (slot.state !== "idle") return;
    clearTimeout(slot.idleTimer);
    slot.idleTimer = setTimeout(() => {
      if (slot.state !== "idle" || this.slots.length <= 1) return;
      this.remove(slot);
      void slot.worker.terminate();
    }, this.options.idleMs ?? DEFAULT_IDLE_MS);
    slot.idleTimer.unref();
  }

  /** Takes the slot's deploy off it (the caller settles it), and its timers. */
  private release(slot: Slot): Job | undefined {
    clearTimeout(slot.budgetTimer);
    clearTimeout(slot.idleTimer);
    const uncharge = slot.uncharge;
    slot.uncharge = undefined;
    if (uncharge) slot.moves = slot.moves.then(uncharge).catch(() => undefined);
    const job = slot.job;
    slot.job = undefined;
    if (job) this.running.delete(job.account);
    return job;
  }

  /** Takes an ended (or ending) worker out of the pool; once its thread's moves are done, the CPU shares forget the thread. */
  private remove(slot: Slot): void {
    const index = this.slots.indexOf(slot);
    if (index >= 0) this.slots.splice(index, 1);
    const threadId = slot.threadId;
    const cpu = this.cpu;
    if (threadId !== null && cpu?.forget) void slot.moves.catch(() => undefined).then(() => cpu.forget?.(threadId));
  }
}

function overBudget(budget: AnalysisBudget, which: "time" | "memory"): ApiError {
  const limit = which === "time" ? `${budget.timeoutMs} ms of analysis` : `${budget.memoryMb} MB of memory`;
  return new ApiError(
    "invalid_code",
    `The code's types (or its syntax) were too complex to read within the deploy budget (${limit}); declare simpler parameter types, or split the module`,
    which === "time" ? { budget: "time", limit_ms: budget.timeoutMs } : { budget: "memory", limit_mb: budget.memoryMb },
  );
}
