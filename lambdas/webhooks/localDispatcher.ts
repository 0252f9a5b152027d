import { type AttemptDeps, attemptDelivery } from "./attemptDelivery";
import type { DeliveryQueue, WebhookOutbox } from "./webhookOutbox";

export interface LocalDispatcherOptions {
  /** How often due deliveries are looked for (besides every wake-up); default 1 s. */
  pollMs?: number;
  /** How many deliveries are attempted at once at most; default 8. */
  concurrency?: number;
}

/** Outbox entries this old are reconciled by the dispatcher's periodic pass (at start: every one). */
const RECONCILE_AGE_MS = 30_000;
const RECONCILE_EVERY_MS = 30_000;
const DUE_BATCH = 50;

/**
 * The local service's webhook sender: polls the store for due deliveries (so what was pending
 * when the service stopped, or was killed, goes out after the next start), attempts each once at
 * a time (attemptDelivery), and is woken when a run's end queues new ones. At start, and every
 * half minute, it makes the deliveries of runs' ends left in the outbox. `close` stops the timer
 * and aborts attempts under way (unrecorded: they stay due for the next start).
 */
export class LocalWebhookDispatcher implements DeliveryQueue {
  private outbox: WebhookOutbox | undefined;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private again = false;
  private closed = false;
  private lastReconcile = 0;
  private readonly inFlight = new Map<string, Promise<unknown>>();
  private readonly stop = new AbortController();

  constructor(
    private readonly deps: AttemptDeps,
    private readonly options: LocalDispatcherOptions = {},
  ) {}

  /** Starts polling: first every outbox entry left by the last run of the service, then due deliveries. */
  start(outbox: WebhookOutbox): void {
    this.outbox = outbox;
    this.lastReconcile = Number.NEGATIVE_INFINITY;
    this.wake();
  }

  async enqueue(): Promise<void> {
    this.wake();
  }

  /** Looks for due deliveries now (after the pass under way, if any). */
  wake(): void {
    if (this.closed || !this.outbox) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.ticking = this.tick()
      .catch((error: unknown) => this.deps.log(`webhook dispatcher: ${(error as Error).message}; trying again`))
      .finally(() => {
        this.ticking = undefined;
        if (this.closed) return;
        if (this.again) {
          this.again = false;
          this.wake();
          return;
        }
        this.timer = setTimeout(() => this.wake(), this.options.pollMs ?? 1_000);
        this.timer.unref();
      });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.stop.abort(new Error("the service is stopping"));
    await this.ticking;
    await Promise.allSettled(this.inFlight.values());
  }

  private async tick(): Promise<void> {
    const now = this.deps.clock.now();
    if (this.outbox && now.getTime() - this.lastReconcile >= RECONCILE_EVERY_MS) {
      const age = this.lastReconcile === Number.NEGATIVE_INFINITY ? 0 : RECONCILE_AGE_MS;
      this.lastReconcile = now.getTime();
      await this.outbox.reconcile(age);
    }
    const limit = this.options.concurrency ?? 8;
    for (const delivery of await this.deps.store.deliveries.due(now, DUE_BATCH)) {
      if (this.closed || this.inFlight.size >= limit) break;
      if (this.inFlight.has(delivery.delivery_id)) continue;
      const attempt = attemptDelivery(this.deps, delivery, this.stop.signal)
        .catch((error: unknown) => {
          if (!this.stop.signal.aborted) this.deps.log(`webhook ${delivery.delivery_id}: attempt not recorded (${(error as Error).message}); it stays due`);
        })
        .finally(() => {
          this.inFlight.delete(delivery.delivery_id);
          // A freed slot may take the next due delivery at once.
          this.wake();
        });
      this.inFlight.set(delivery.delivery_id, attempt);
    }
  }
}
