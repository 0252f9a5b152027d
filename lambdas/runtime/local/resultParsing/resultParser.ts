import path from "node:path";
import { Worker } from "node:worker_threads";
import { WORKER_BOOTSTRAP } from "../../../code/analysis/analysisWorkerScript";
import type { FrameParse, OffThreadFrames } from "../../../runner/frames";
import type { BlobCompressor } from "../../../store/blobParts";
import type { DeliveryBodyInput } from "../../../webhooks/deliveryBody";
import type { DeliveryBodyBuilder } from "../../../webhooks/deliveryBodies";
import type { RecordingChecks } from "../../../recording/keepRecordingFile";
import type { CpuShares } from "../cpuShares/cpuShares";
import type { RecordingVerdict, ThreadHello, ThreadJob, ThreadReply } from "./threadJobs";

/**
 * Frames from this size up are parsed on the thread; smaller ones stay on the service's thread,
 * where they cost less than the trip (docs/benchmarks.md, "Parsing results off the thread").
 */
export const OFF_THREAD_MIN_BYTES = 64 * 1024;
/** The heap the parsing thread may use: a frame at the 12.5 MB cap, parsed and redacted. */
const PARSE_HEAP_MB = 512;

interface Waiting {
  account: string;
  job: ThreadJob;
  /** What the job's bytes are moved with (not copied). */
  transfer: ArrayBuffer[];
  /** Its reply, or why the thread could not give one. */
  settle: (reply: ThreadReply | { gone: string }) => void;
}

/**
 * The service's costly work on runs' results, on one worker thread of its own (parseThread.ts):
 * workers' big frames parsed (a run's result, mostly), big results gzipped for the store (as
 * BlobCompressor), the bodies of runs' webhook deliveries built (as DeliveryBodyBuilder), and
 * the recordings runs keep checked (as RecordingChecks). One job at a time, accounts in turn: the next job is
 * that of the waiting account with the fewest jobs done since it last had none waiting (the
 * longest waiting among equals), so an account whose runs send many big results waits behind its
 * own, never ahead of another account's one. With CPU shares (chargeTo), the thread does each
 * job in the share of the job's account (CpuShares.charge), and goes back to its own once nothing
 * waits. The thread starts with the first job and stays until close().
 */
export class ResultParser implements DeliveryBodyBuilder, BlobCompressor, RecordingChecks {
  private worker: Worker | undefined;
  private next = 1;
  /** Frames waiting, by account, in the order the accounts came. */
  private readonly queues = new Map<string, Waiting[]>();
  /** Frames parsed (or on the thread) per account since it last had none waiting or on the thread. */
  private readonly served = new Map<string, number>();
  private inFlight: Waiting | undefined;
  private closed = false;
  /** Frames parsed, blobs gzipped, delivery bodies built and recordings checked on the thread so far, that thread's id and the cpu group of its last job (for tests and metrics). */
  readonly stats: { parsed: number; gzipped: number; bodies: number; recordings: number; threadId: number; cpuGroup?: string } = { parsed: 0, gzipped: 0, bodies: 0, recordings: 0, threadId: -1 };
  private cpu: CpuShares | undefined;
  /** The thread's Linux id, once it has said it (null: none to charge, or the thread went first). */
  private tid: Promise<number | null> | undefined;
  /** Settles `tid` (with null when the thread goes before it said it). */
  private sayTid: (tid: number | null) => void = () => undefined;
  /** The account whose share the thread is in now, and its release. */
  private seat: { account: string; release: () => Promise<void> } | undefined;
  /** Moves of the thread, one after the other. */
  private seating: Promise<void> = Promise.resolve();

  /** From now on each job's CPU counts against its account's share (CpuShares.charge). */
  chargeTo(cpu: CpuShares): void {
    this.cpu = cpu;
  }

  /** The frame reader's hook for one worker: its frames parsed here for `account`, with the secrets of its run now. */
  frames(account: () => string, secrets: () => readonly string[], maxDepth: number): OffThreadFrames {
    return { minBytes: OFF_THREAD_MIN_BYTES, parse: (body) => this.parse(account(), body, maxDepth, secrets()) };
  }

  parse(account: string, body: Buffer, maxDepth: number, secrets: readonly string[]): Promise<FrameParse> {
    if (this.closed) return Promise.resolve({ ok: false, problem: "the service is stopping", kind: "too_large" });
    // A copy of its own, handed over to the thread (the reader's buffer may hold other frames).
    const bytes = new Uint8Array(body);
    const job: ThreadJob = { id: this.next++, kind: "frame", body: bytes, maxDepth, secrets: [...secrets] };
    return new Promise((resolve) => {
      this.enqueue(account, job, [bytes.buffer as ArrayBuffer], (reply) => {
        if ("gone" in reply) return resolve({ ok: false, problem: reply.gone, kind: "too_large" });
        if (reply.kind !== "frame") return resolve({ ok: false, problem: "a message could not be parsed", kind: "too_large" });
        this.stats.parsed++;
        const parsed = reply.parse;
        resolve(
          parsed.ok
            ? { ok: true, message: parsed.message, ...(parsed.resultJson === undefined ? {} : { resultJson: parsed.resultJson }) }
            : { ok: false, problem: parsed.problem, kind: parsed.kind },
        );
      });
    });
  }

  /** The body of a run's webhook deliveries (buildDeliveryBody), built on the thread in `account`'s turn; rejects when it cannot be. */
  build(account: string, input: DeliveryBodyInput): Promise<string> {
    return this.ask(account, { id: this.next++, kind: "body", input }, (reply) => {
      if (reply.kind !== "body") return new Error("the thread answered another job");
      if (!reply.built.ok) return new Error(reply.built.error);
      this.stats.bodies++;
      return reply.built.body;
    });
  }

  /** `text` gzipped (as blobParts's GZIP_OPTIONS) on the thread in `account`'s turn; rejects when it cannot be. */
  gzip(account: string, text: string): Promise<Uint8Array> {
    return this.ask(account, { id: this.next++, kind: "gzip", text }, (reply) => {
      if (reply.kind !== "gzip") return new Error("the thread answered another job");
      if (!reply.gzipped.ok) return new Error(reply.gzipped.error);
      this.stats.gzipped++;
      return reply.gzipped.bytes;
    });
  }

  /**
   * The recording at `file` (a run of `account` kept it) checked, redacted of `secrets` and
   * written back as checked, on the thread in the account's turn; never rejects (a thread that
   * cannot answer drops the recording, with why).
   */
  checkRecording(account: string, file: string, secrets: readonly string[]): Promise<RecordingVerdict> {
    return this.ask(account, { id: this.next++, kind: "recording", file, secrets: [...secrets] }, (reply) => {
      if (reply.kind !== "recording") return new Error("the thread answered another job");
      this.stats.recordings++;
      return reply.checked;
    }).catch((error: unknown) => ({ keep: false as const, why: `it could not be checked: ${(error as Error).message}` }));
  }

  /** `job` done on the thread in `account`'s turn: what `take` makes of its reply, or a rejection (the thread gone, or `take`'s Error). */
  private ask<T>(account: string, job: ThreadJob, take: (reply: ThreadReply) => T | Error): Promise<T> {
    if (this.closed) return Promise.reject(new Error("the service is stopping"));
    return new Promise((resolve, reject) => {
      this.enqueue(account, job, [], (reply) => {
        if ("gone" in reply) return reject(new Error(reply.gone));
        const taken = take(reply);
        if (taken instanceof Error) reject(taken);
        else resolve(taken);
      });
    });
  }

  private enqueue(account: string, job: ThreadJob, transfer: ArrayBuffer[], settle: Waiting["settle"]): void {
    const waiting: Waiting = { account, job, transfer, settle };
    const queue = this.queues.get(account);
    if (queue) queue.push(waiting);
    else this.queues.set(account, [waiting]);
    if (!this.served.has(account)) this.served.set(account, 0);
    this.pump();
  }

  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = undefined;
    this.failAll("the service is stopping");
    // A move waiting for a thread that never said its id goes on (to nothing), not for ever.
    this.sayTid(null);
    await worker?.terminate();
    // Out of the last account's share (its group is removed with its last sandbox).
    await this.seatFor(undefined);
  }

  /** Sends the next account's next job to the thread, when it has none. */
  private pump(): void {
    if (this.inFlight || this.closed) return;
    let account: string | undefined;
    for (const waiting of this.queues.keys()) {
      if (account === undefined || (this.served.get(waiting) ?? 0) < (this.served.get(account) ?? 0)) account = waiting;
    }
    if (account === undefined) return;
    const queue = this.queues.get(account) as Waiting[];
    const waiting = queue.shift() as Waiting;
    if (queue.length === 0) this.queues.delete(account);
    this.served.set(account, (this.served.get(account) ?? 0) + 1);
    this.inFlight = waiting;
    const worker = this.thread();
    if (!this.cpu) return this.post(worker, waiting);
    void this.seatFor(account).then(() => this.post(worker, waiting));
  }

  private post(worker: Worker, waiting: Waiting): void {
    // The thread went, or the service stopped, while it was moved: the job was settled then.
    if (this.inFlight !== waiting || this.worker !== worker) return;
    try {
      worker.postMessage(waiting.job, waiting.transfer);
    } catch (error) {
      // Not to be copied to the thread (a record nested past what structured cloning takes): this job fails, the next goes on.
      this.inFlight = undefined;
      this.settled(waiting.account);
      waiting.settle({ gone: `it could not be handed to the thread: ${(error as Error).message}` });
      this.pump();
    }
  }

  /**
   * Puts the thread in `account`'s share (none: back in its own), after the moves before it. A
   * move that fails leaves the thread where it is: the job is done all the same.
   */
  private seatFor(account: string | undefined): Promise<void> {
    const moved = this.seating.then(async () => {
      if (!this.cpu || this.seat?.account === account) return;
      const seat = this.seat;
      this.seat = undefined;
      await seat?.release();
      if (account === undefined || this.closed) return;
      const tid = await this.tid;
      if (tid === null || tid === undefined || this.closed) return;
      this.seat = { account, release: await this.cpu.charge(account, tid) };
    });
    this.seating = moved.catch(() => undefined);
    return this.seating;
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_BOOTSTRAP, {
      eval: true,
      workerData: { entry: path.join(__dirname, "parseThread.ts"), register: require.resolve("tsx/cjs") },
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: PARSE_HEAP_MB },
    });
    worker.unref();
    let said: (tid: number | null) => void = () => undefined;
    this.tid = new Promise((resolve) => (said = resolve));
    this.sayTid = said;
    worker.on("message", (reply: ThreadReply | ThreadHello) => {
      if (!("id" in reply)) return said(reply.tid);
      const waiting = this.inFlight;
      if (!waiting || waiting.job.id !== reply.id) return;
      this.inFlight = undefined;
      this.settled(waiting.account);
      this.stats.threadId = reply.threadId;
      this.stats.cpuGroup = reply.cpuGroup;
      waiting.settle(reply);
      this.pump();
      // Nothing waits: the thread leaves the account's share.
      if (!this.inFlight) void this.seatFor(undefined);
    });
    const gone = (why: string) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      said(null);
      // The job it had fails (a frame's run ends result_too_large); the others go to a new thread.
      const waiting = this.inFlight;
      this.inFlight = undefined;
      if (waiting) this.settled(waiting.account);
      waiting?.settle({ gone: `a message could not be parsed: ${why}` });
      // Its seat is given back; the next thread takes one of its own.
      void this.seatFor(undefined);
      this.pump();
    };
    worker.on("error", (error) => gone(error.message));
    worker.on("exit", (code) => gone(`the parsing thread exited (code ${code})`));
    this.worker = worker;
    return worker;
  }

  /** An account with nothing left waiting starts again from none served. */
  private settled(account: string): void {
    if (!this.queues.has(account)) this.served.delete(account);
  }

  private failAll(why: string): void {
    const all = [...(this.inFlight ? [this.inFlight] : []), ...[...this.queues.values()].flat()];
    this.inFlight = undefined;
    this.queues.clear();
    this.served.clear();
    for (const waiting of all) waiting.settle({ gone: why });
  }
}
