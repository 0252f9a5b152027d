import { type AttemptDeps, attemptDelivery } from "./attemptDelivery";
import { endpointOf, fairTurns, type UnderWay } from "./fairTurns";
import { partitionOf } from "../store/deliveryStore";
import type { DeliveryQueue, WebhookOutbox } from "./webhookOutbox";
import type { DeliveryItem } from "./webhookTypes";

export interface LocalDispatcherOptions {
  /** How often due deliveries are looked for (besides every wake-up); default 1 s. */
  pollMs?: number;
  /** How many deliveries are attempted at once at most; default 16. */
  concurrency?: number;
  /** How many of one account's deliveries are attempted at once at most; default 4. */
  perAccount?: number;
  /** How many deliveries to one endpoint (an account's receiver: its URL's origin) are attempted at once at most; default 2. */
  perEndpoint?: number;
}

/** Outbox entries this old are reconciled by the dispatcher's periodic pass (at start: every one). */
const RECONCILE_AGE_MS = 30_000;
const RECONCILE_EVERY_MS = 30_000;
/** Due partitions (an account's endpoints) looked at per pass at most (the rest are next, as markers come and go). */
const ACCOUNTS_PER_PASS = 1_000;
/** One due partition's deliveries read per pass at most (past those under way and held). */
const MAX_READ_PER_PARTITION = 100;
/** Defaults: attempts at once in all, per account, per endpoint (an attempt mostly waits on the network). */
const CONCURRENCY = 16;
const PER_ACCOUNT = 4;
const PER_ENDPOINT = 2;
/** Deliveries of the shared due partition (written before it was per account) read per pass. */
const SHARED_BATCH = 50;
/** An attempt that could not be recorded (the store failed) is held back this long, doubling to the most. */
const HOLD_FIRST_MS = 1_000;
const HOLD_MOST_MS = 60_000;

/**
 * The local service's webhook sender: polls the store for due deliveries (so what was pending
 * when the service stopped, or was killed, goes out after the next start), attempts each once at
 * a time (attemptDelivery), and is woken when a run's end queues new ones. Due deliveries are
 * read account by account and started fairly (fairTurns: the account with the fewest under way
 * first, at most `perAccount` each, and within an account its endpoints in turn, at most
 * `perEndpoint` each), so no account's backlog delays another's, and a receiver that never
 * answers (each attempt waiting out its timeout) delays only the deliveries to it. A pass does not
 * even read the due deliveries of an account, or of a receiver, that has all its attempts under
 * way: however many deliveries a tenant owes, or however long its receivers hang, its share of
 * the dispatcher's own work is what its attempts under way allow (and its bytes in flight are
 * at most `perAccount` bodies of at most 256 KB each). An attempt that
 * could not be recorded is held back, with a growing delay, instead of being tried again at once.
 * At start, and every half minute, it makes the deliveries of runs' ends left in the outbox.
 * `close` stops the timer and aborts attempts under way (unrecorded: they stay due for the next
 * start).
 */
export class LocalWebhookDispatcher implements DeliveryQueue {
  private outbox: WebhookOutbox | undefined;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private again = false;
  private closed = false;
  private lastReconcile = 0;
  private turn = 0;
  /** Attempts under way, by delivery id, with their account. */
  private readonly inFlight = new Map<string, { account: string; partition: string; endpoint: string; attempt: Promise<unknown> }>();
  /** Deliveries whose last attempt was not recorded: not tried again before `until`. */
  private readonly held = new Map<string, { account: string; partition: string; until: number; delayMs: number }>();
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
    await Promise.allSettled([...this.inFlight.values()].map((entry) => entry.attempt));
  }

  private async tick(): Promise<void> {
    const now = this.deps.clock.now();
    if (this.outbox && now.getTime() - this.lastReconcile >= RECONCILE_EVERY_MS) {
      const age = this.lastReconcile === Number.NEGATIVE_INFINITY ? 0 : RECONCILE_AGE_MS;
      this.lastReconcile = now.getTime();
      await this.outbox.reconcile(age);
    }
    this.forgetOldHolds(now.getTime());
    const slots = (this.options.concurrency ?? CONCURRENCY) - this.inFlight.size;
    if (slots <= 0 || this.closed) return;
    const limits = { slots, perAccount: this.options.perAccount ?? PER_ACCOUNT, perEndpoint: this.options.perEndpoint ?? PER_ENDPOINT };
    const chosen = fairTurns(await this.dueByAccount(now), this.underWay(), limits, this.turn++);
    for (const delivery of chosen) {
      if (this.closed) break;
      this.begin(delivery);
    }
  }

  /**
   * Due deliveries by account, soonest first: enough of each due partition's (an account's
   * endpoint: see DeliveryStore) to fill its share, none under way or held. Read partition by
   * partition, so a receiver's backlog, however long, never hides its account's other receivers'.
   */
  private async dueByAccount(now: Date): Promise<Map<string, DeliveryItem[]>> {
    const store = this.deps.store.deliveries;
    const perEndpoint = this.options.perEndpoint ?? PER_ENDPOINT;
    const perAccount = this.options.perAccount ?? PER_ACCOUNT;
    const { byAccount, byPartition } = this.underWayByPartition();
    const due = new Map<string, DeliveryItem[]>();
    const add = (delivery: DeliveryItem) => {
      if (this.inFlight.has(delivery.delivery_id) || this.isHeld(delivery.delivery_id, now.getTime())) return;
      due.set(delivery.account_id, [...(due.get(delivery.account_id) ?? []), delivery]);
    };
    for (const marker of await store.dueAccounts(ACCOUNTS_PER_PASS)) {
      // Nothing of it could start now (its account, or its receiver, has all the attempts it may have under way): not read.
      // A receiver that never answers, or an account with many deliveries, costs the pass nothing while it waits.
      if ((byAccount.get(marker.account_id) ?? 0) >= perAccount) continue;
      if (marker.partition !== marker.account_id && (byPartition.get(marker.partition) ?? 0) >= perEndpoint) continue;
      // Those under way and held come back in the query too: read past them (an account's partition of before: all of its).
      const skipped = marker.partition === marker.account_id ? this.countOf((entry) => entry.account === marker.account_id) : this.countOf((entry) => entry.partition === marker.partition);
      const found = await store.dueOf(marker.partition, now, Math.min(perEndpoint + skipped, MAX_READ_PER_PARTITION));
      if (found.length === 0) await store.forgetIfIdle(marker);
      for (const delivery of found) add(delivery);
    }
    for (const delivery of await store.dueShared(now, SHARED_BATCH)) add(delivery);
    // Soonest first within each account, whichever partition it came from.
    for (const deliveries of due.values()) deliveries.sort((a, b) => ((a.next_attempt_at ?? "") < (b.next_attempt_at ?? "") ? -1 : (a.next_attempt_at ?? "") > (b.next_attempt_at ?? "") ? 1 : 0));
    return due;
  }

  /** Starts one attempt; when it ends, its slot is free and the next due delivery may take it at once. */
  private begin(delivery: DeliveryItem): void {
    const attempt = attemptDelivery(this.deps, delivery, this.stop.signal)
      .then((recorded) => {
        // Nothing was recorded (another attempt was, or the store refused): not again at once.
        if (recorded === delivery) this.hold(delivery, "its attempt was not recorded");
        else this.held.delete(delivery.delivery_id);
      })
      .catch((error: unknown) => {
        if (!this.stop.signal.aborted) this.hold(delivery, `attempt not recorded (${(error as Error).message})`);
      })
      .finally(() => {
        this.inFlight.delete(delivery.delivery_id);
        this.wake();
      });
    this.inFlight.set(delivery.delivery_id, { account: delivery.account_id, partition: partitionOf(delivery), endpoint: endpointOf(delivery), attempt });
  }

  private hold(delivery: DeliveryItem, why: string): void {
    const previous = this.held.get(delivery.delivery_id);
    const delayMs = previous ? Math.min(previous.delayMs * 2, HOLD_MOST_MS) : HOLD_FIRST_MS;
    this.held.set(delivery.delivery_id, { account: delivery.account_id, partition: partitionOf(delivery), until: this.deps.clock.now().getTime() + delayMs, delayMs });
    this.deps.log(`webhook ${delivery.delivery_id}: ${why}; it stays due, tried again in ${delayMs} ms at the soonest`);
  }

  /** Forgets holds long past (their delay would start over): what is held stays bounded by what keeps failing. */
  private forgetOldHolds(now: number): void {
    for (const [deliveryId, held] of this.held) if (held.until + HOLD_MOST_MS < now) this.held.delete(deliveryId);
  }

  private isHeld(deliveryId: string, now: number): boolean {
    const held = this.held.get(deliveryId);
    return held !== undefined && held.until > now;
  }

  /** Deliveries under way, and held back, as this dispatcher knows them, that `match`. */
  private countOf(match: (entry: { account: string; partition: string }) => boolean): number {
    let count = 0;
    for (const entry of [...this.inFlight.values(), ...this.held.values()]) if (match(entry)) count++;
    return count;
  }

  /** Attempts under way by account and by due partition (an account's endpoint: partitionOf). */
  private underWayByPartition(): { byAccount: Map<string, number>; byPartition: Map<string, number> } {
    return { byAccount: this.inFlightBy((entry) => entry.account), byPartition: this.inFlightBy((entry) => entry.partition) };
  }

  private underWay(): UnderWay {
    return { byAccount: this.inFlightBy((entry) => entry.account), byEndpoint: this.inFlightBy((entry) => entry.endpoint) };
  }

  /** Attempts under way, counted by `key`. */
  private inFlightBy(key: (entry: { account: string; partition: string; endpoint: string }) => string): Map<string, number> {
    const counts = new Map<string, number>();
    for (const entry of this.inFlight.values()) counts.set(key(entry), (counts.get(key(entry)) ?? 0) + 1);
    return counts;
  }
}
