import { randomBytes } from "node:crypto";
import { CreateQueueCommand, DeleteMessageCommand, DeleteQueueCommand, ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { z } from "zod";
import {
  MAX_LONG_POLL_SECONDS,
  parseWaitQueueUrlPrefix,
  WAIT_MESSAGE_RETENTION_SECONDS,
  WAIT_QUEUE_ROTATE_MS,
  waitQueueName,
} from "./waitQueueNames";

/** The SQS calls a waiting route makes on its own wait queue (an SQSClient, or a test's stand-in). */
export interface WaitQueueSqs {
  send(command: CreateQueueCommand | ReceiveMessageCommand | DeleteMessageCommand | DeleteQueueCommand, options?: { abortSignal?: AbortSignal }): Promise<unknown>;
}

/** One run watched for its end notice. */
export interface RunEndWatch {
  /** The queue the run's recorder is to notify (the execution input's `notify`). */
  queueUrl: string;
  /**
   * Resolves `ended` once the run's end notice came; `window_over` at `deadlineMs` (epoch ms) or
   * when `signal` aborts; `unavailable` when the queue failed (the caller reads the record instead).
   */
  ended(deadlineMs: number, signal?: AbortSignal): Promise<WaitOutcome>;
  /** Stops watching: a notice that comes later is dropped. */
  close(): void;
}

/** How a wait for a run's end notice ended. */
export type WaitOutcome = "ended" | "window_over" | "unavailable";

/** Where runs' end notices come from (runExecutions.ts): null when there is no queue to name (it could not be made). */
export interface RunEndNotices {
  watch(runId: string): Promise<RunEndWatch | null>;
}

export interface RunEndWaiterOptions {
  sqs: WaitQueueSqs;
  /** `https://sqs.<region>.<suffix>/<account>/<prefix>-wait-` (the stack's BROWSERFN_WAIT_QUEUE_URL_PREFIX). */
  urlPrefix: string;
  /** Tags of the queues it makes (the stack's, so that they are found and billed to it). */
  tags: Record<string, string>;
  log: (line: string) => void;
  now?: () => number;
  /** The random part of a new queue's name (default 8 hex characters). */
  random?: () => string;
}

/** An end notice, as the recorder sends it (notifyRunEnd.ts). */
const Notice = z.object({ run_id: z.string().min(1).max(100) });

interface Watcher {
  /** When the wait in progress ends (epoch ms); infinite while nobody waits (a notice is still kept). */
  deadlineMs: number;
  /** What was heard (kept for the next `ended` when nobody waited). */
  heard: "ended" | "unavailable" | null;
  /** Ends the wait in progress with what was heard. */
  wake: (() => void) | null;
}

/**
 * The end notices of one route Lambda container (docs/deploy.md, "Waiting for a run"). The
 * container owns one SQS queue, made at its first wait (CreateQueue, idempotent by name) and
 * replaced once it is WAIT_QUEUE_ROTATE_MS old; each run it waits for names the queue in its
 * execution input, and the recorder sends the run's id there once its end is written. While a
 * run is watched, one ReceiveMessage long poll of up to 20 s is out at a time (however many runs
 * are watched; a Lambda container waits for one); every message received is deleted, and the
 * watcher of its run, if any, is told. Nothing reads the run's record here.
 *
 * Messages are received with VisibilityTimeout 0: a long poll cut off by the container's freeze
 * (its caller answered) cannot hide the next run's notice.
 */
export class RunEndWaiter implements RunEndNotices {
  private readonly baseUrl: string;
  private readonly namePrefix: string;
  private readonly now: () => number;
  private readonly random: () => string;
  private queue: { url: string; createdMs: number } | null = null;
  private readonly watchers = new Map<string, Watcher>();
  private polling: AbortController | null = null;

  constructor(private readonly options: RunEndWaiterOptions) {
    const parsed = parseWaitQueueUrlPrefix(options.urlPrefix);
    if (!parsed) throw new Error(`'${options.urlPrefix}' is not a wait queue URL prefix (https://sqs.<region>.<suffix>/<account>/<prefix>-wait-)`);
    this.baseUrl = parsed.baseUrl;
    this.namePrefix = parsed.namePrefix;
    this.now = options.now ?? Date.now;
    this.random = options.random ?? (() => randomBytes(4).toString("hex"));
  }

  async watch(runId: string): Promise<RunEndWatch | null> {
    const queueUrl = await this.queueUrl().catch((error: unknown) => {
      this.options.log(`wait queue: making it failed (the run's record is read instead): ${(error as Error).message}`);
      return null;
    });
    if (queueUrl === null) return null;
    // Registered before the run starts: its notice can come before `ended` is called, or between two.
    const watcher: Watcher = { deadlineMs: Number.POSITIVE_INFINITY, heard: null, wake: null };
    this.watchers.set(runId, watcher);
    return {
      queueUrl,
      ended: (deadlineMs, signal) => {
        if (watcher.heard !== null) return Promise.resolve(watcher.heard);
        if (this.watchers.get(runId) !== watcher || signal?.aborted) return Promise.resolve("window_over");
        return new Promise<WaitOutcome>((resolve) => {
          const finish = (outcome: WaitOutcome) => {
            clearTimeout(timer);
            signal?.removeEventListener("abort", aborted);
            watcher.wake = null;
            watcher.deadlineMs = Number.POSITIVE_INFINITY;
            resolve(outcome);
          };
          const aborted = () => finish("window_over");
          const timer = setTimeout(() => finish("window_over"), Math.max(0, deadlineMs - this.now()));
          signal?.addEventListener("abort", aborted, { once: true });
          watcher.wake = () => finish(watcher.heard ?? "window_over");
          watcher.deadlineMs = deadlineMs;
          this.poll();
        });
      },
      close: () => {
        if (this.watchers.get(runId) !== watcher) return;
        this.watchers.delete(runId);
        watcher.wake?.();
        if (this.watchers.size === 0) this.polling?.abort();
      },
    };
  }

  /** This container's queue: made at the first wait, and again once it is WAIT_QUEUE_ROTATE_MS old and no run is watched. */
  private async queueUrl(): Promise<string> {
    const now = this.now();
    if (this.queue && (now - this.queue.createdMs < WAIT_QUEUE_ROTATE_MS || this.watchers.size > 0)) return this.queue.url;
    const old = this.queue;
    this.queue = null;
    if (old) {
      // Used by nobody from here on; the sweeper deletes it if this fails.
      await this.options.sqs.send(new DeleteQueueCommand({ QueueUrl: old.url })).catch((error: unknown) => this.options.log(`wait queue: deleting ${old.url} failed: ${(error as Error).message}`));
    }
    const name = waitQueueName(this.namePrefix, now, this.random());
    const created = (await this.options.sqs.send(
      new CreateQueueCommand({
        QueueName: name,
        Attributes: { MessageRetentionPeriod: String(WAIT_MESSAGE_RETENTION_SECONDS), SqsManagedSseEnabled: "true" },
        tags: this.options.tags,
      }),
    )) as { QueueUrl?: string };
    const url = created.QueueUrl ?? `${this.baseUrl}${name}`;
    if (url !== `${this.baseUrl}${name}`) throw new Error(`SQS made the queue at ${url}, not under ${this.baseUrl}`);
    this.queue = { url, createdMs: now };
    return url;
  }

  /** Tells the run's watcher what was heard. */
  private tell(watcher: Watcher | undefined, outcome: "ended" | "unavailable"): void {
    if (!watcher) return;
    watcher.heard ??= outcome;
    watcher.wake?.();
  }

  /** Starts the poll loop unless it runs: it goes on while a run is watched. */
  private poll(): void {
    if (this.polling || !this.queue) return;
    const controller = new AbortController();
    this.polling = controller;
    void this.pollLoop(this.queue.url, controller.signal).finally(() => {
      if (this.polling === controller) this.polling = null;
      // A wait begun meanwhile (after the loop saw none). Only one still in its time: a wait
      // whose deadline passed ends by its own timer, and restarting for it would spin.
      if ([...this.watchers.values()].some((watcher) => Number.isFinite(watcher.deadlineMs) && watcher.deadlineMs > this.now())) this.poll();
    });
  }

  private async pollLoop(queueUrl: string, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const deadlines = [...this.watchers.values()].map((watcher) => watcher.deadlineMs).filter(Number.isFinite);
      const leftMs = Math.max(0, ...deadlines) - this.now();
      if (deadlines.length === 0 || leftMs <= 0) return;
      const waitSeconds = Math.min(MAX_LONG_POLL_SECONDS, Math.ceil(leftMs / 1000));
      let received: { Messages?: { Body?: string; ReceiptHandle?: string }[] };
      try {
        received = (await this.options.sqs.send(
          new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: waitSeconds, VisibilityTimeout: 0 }),
          { abortSignal: signal },
        )) as typeof received;
      } catch (error) {
        if (signal.aborted) return;
        this.failed(queueUrl, `receiving failed: ${(error as Error).message}`);
        return;
      }
      for (const message of received.Messages ?? []) {
        try {
          // Deleted whoever it is for: a notice nobody watches is of a run whose caller answered already.
          if (message.ReceiptHandle) await this.options.sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle }));
        } catch (error) {
          // Undeleted, it would come back at once (VisibilityTimeout 0): stop here, the callers read the record.
          this.failed(queueUrl, `deleting a message failed: ${(error as Error).message}`);
          return;
        }
        const notice = Notice.safeParse(parseJson(message.Body));
        if (notice.success) this.tell(this.watchers.get(notice.data.run_id), "ended");
      }
    }
  }

  /** The queue failed: every watched run falls back to its caller's read, and the next wait makes a new queue. */
  private failed(queueUrl: string, why: string): void {
    this.options.log(`wait queue ${queueUrl}: ${why}; the waiting runs' records are read instead`);
    if (this.queue?.url === queueUrl) this.queue = null;
    for (const watcher of [...this.watchers.values()]) this.tell(watcher, "unavailable");
  }
}

function parseJson(text: string | undefined): unknown {
  try {
    return text === undefined ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}
