import type { Clock } from "../deps";
import type { RunItem } from "../runs/types";
import type { RunWithPendingDeliveries } from "../store/runItems";
import type { Store } from "../store/store";
import { type DeliveryBodyBuilder, keepDeliveryBody } from "./deliveryBodies";
import { type DeliveryItem, deliveryIdOf, eventOfStatus, type PendingDelivery } from "./webhookTypes";

/** A delivery to attempt: where its item is. */
export interface DeliveryRef {
  function_id: string;
  delivery_id: string;
  /** Whose it is: the SQS queue takes it as the message group, so one account's messages do not hold back another's. */
  account_id: string;
}

/** Where new deliveries are handed to be sent: the local dispatcher, or the SQS queue of the delivery Lambda. */
export interface DeliveryQueue {
  /** Resolves once they are queued (throws when they could not be: the run's outbox entry then stays, and is picked up again). */
  enqueue(deliveries: DeliveryRef[]): Promise<void>;
}

/**
 * The outbox of runs' ends. Why this shape: a run's end and the deliveries it owes must not be
 * separable (DynamoDB here has no transactions: dynalite has none). So the write that ends a
 * run (RunStore.putIfActive, conditional: once, whoever records it) also writes the deliveries
 * it owes onto the run item, with an index entry. Then they become delivery items of their own,
 * are queued, and the run's entry is removed. A process that dies in between leaves the entry:
 * `reconcile` (the local dispatcher at start and every half minute; the AWS sweeper every few
 * minutes) makes the deliveries from it. Making them twice is harmless (delivery items are
 * created only if absent; an attempt is recorded only once).
 */
export interface WebhookOutbox {
  /** The deliveries a run's end owes: its function's webhooks subscribed to the event, read now. */
  pendingFor(run: RunItem): Promise<PendingDelivery[]>;
  /**
   * After the final write: builds the body its deliveries send, once, and keeps it
   * (keepDeliveryBody), then makes the run's pending deliveries and queues them. Never throws (logs).
   */
  runEnded(run: RunItem, pending: PendingDelivery[]): Promise<void>;
  /** Makes the deliveries of ends older than `olderThanMs` whose outbox entry is still there; how many runs. */
  reconcile(olderThanMs: number): Promise<number>;
}

export interface OutboxDeps {
  store: Pick<Store, "functions" | "runs" | "deliveries">;
  queue: DeliveryQueue;
  clock: Clock;
  log: (line: string) => void;
  /** Where the body of a run's end is built, once (deliveryBodies.ts; default: here). */
  bodies?: DeliveryBodyBuilder;
}

/** Runs' ends reconciled per call at most; the next call takes the rest. */
const RECONCILE_BATCH = 100;

export function createWebhookOutbox(deps: OutboxDeps): WebhookOutbox {
  const materialize = async (run: RunWithPendingDeliveries) => {
    const now = deps.clock.now().toISOString();
    for (const pending of run.pending) {
      const delivery: DeliveryItem = {
        delivery_id: pending.delivery_id,
        account_id: run.account_id,
        function_id: run.function_id,
        run_id: run.run_id,
        event: pending.event,
        url: pending.url,
        status: "pending",
        attempts: 0,
        last_status_code: null,
        last_error: null,
        next_attempt_at: now,
        created_at: now,
        updated_at: now,
      };
      await deps.store.deliveries.create(delivery);
    }
    await deps.queue.enqueue(run.pending.map((pending) => ({ function_id: run.function_id, delivery_id: pending.delivery_id, account_id: run.account_id })));
    await deps.store.runs.clearPendingDeliveries(run.run_id);
  };
  return {
    async pendingFor(run) {
      const event = eventOfStatus(run.status);
      if (event === null) return [];
      const fn = await deps.store.functions.getById(run.function_id);
      if (!fn || fn.account_id !== run.account_id) return [];
      return fn.webhooks.flatMap((webhook, index) =>
        webhook.events.includes(event) ? [{ delivery_id: deliveryIdOf(run.run_id, index), url: webhook.url, event }] : [],
      );
    },
    async runEnded(run, pending) {
      const first = pending[0];
      if (first === undefined) return;
      // A run ends once: every delivery of its end carries the same event, and the same body.
      await keepDeliveryBody(deps, run, first.event);
      try {
        await materialize({ run_id: run.run_id, account_id: run.account_id, function_id: run.function_id, pending });
      } catch (error) {
        deps.log(`webhooks of run ${run.run_id}: not queued yet (${(error as Error).message}); the outbox entry on the run is retried`);
      }
    },
    async reconcile(olderThanMs) {
      const runs = await deps.store.runs.listPendingDeliveries(new Date(deps.clock.now().getTime() - olderThanMs), RECONCILE_BATCH);
      for (const run of runs) await materialize(run);
      return runs.length;
    },
  };
}
