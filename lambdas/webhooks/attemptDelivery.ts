import type { Clock } from "../deps";
import type { SecretBox } from "../secrets/secretBox";
import type { Store } from "../store/store";
import { bodyForAttempt, type DeliveryBodyBuilder } from "./deliveryBodies";
import { type PostOptions, type PostResult, postWebhook } from "./postWebhook";
import { MAX_DELIVERY_ATTEMPTS, retryDelayMs } from "./retrySchedule";
import { openWebhookSecret, signWebhook } from "./webhookSecret";
import type { DeliveryItem } from "./webhookTypes";

/** What an attempt needs: the same locally (the dispatcher) and on AWS (the delivery Lambda). */
export interface AttemptDeps {
  store: Pick<Store, "functions" | "runs" | "deliveries">;
  secretBox: SecretBox;
  clock: Clock;
  /** Never given a secret: lines name deliveries, runs and functions by id. */
  log: (line: string) => void;
  allowLocalNetwork: boolean;
  /** The retry schedule's base delay (retrySchedule.ts). */
  retryBaseMs: number;
  /** Options of the POST (a timeout, a resolver in tests). */
  post?: Pick<PostOptions, "timeoutMs" | "resolve">;
  /** Where a body not kept at the run's end is built (deliveryBodies.ts; default: here). */
  bodies?: DeliveryBodyBuilder;
}

/**
 * Makes one attempt of a pending delivery and records it: the function's current signing
 * secret signs the body of the run's end (built once, as `GET /runs/{id}` shows the run, and
 * kept: bodyForAttempt); a 2xx makes it `delivered`, anything else schedules the next attempt
 * (retrySchedule.ts) or, after the last, makes it `failed`. A deleted function's delivery is
 * `cancelled`; one whose run is gone, or whose body cannot be built (a record nothing can write
 * out), is `failed` at once, with why. Returns the delivery as recorded (or as it was, when
 * another attempt was recorded meanwhile). `signal` aborts it unrecorded (the service is
 * stopping; it stays due).
 */
export async function attemptDelivery(deps: AttemptDeps, delivery: DeliveryItem, signal?: AbortSignal): Promise<DeliveryItem> {
  if (delivery.status !== "pending") return delivery;
  const fn = await deps.store.functions.getById(delivery.function_id);
  if (!fn || fn.account_id !== delivery.account_id) return finish(deps, delivery, { status: "cancelled", error: "the function was deleted" });
  const prepared = await bodyForAttempt(deps, delivery);
  if ("failed" in prepared) {
    deps.log(`webhook ${delivery.delivery_id} (run ${delivery.run_id}): ${prepared.failed}; failed`);
    return finish(deps, delivery, { status: "failed", error: prepared.failed });
  }
  const secret = await openWebhookSecret(deps.secretBox, fn);
  let result: PostResult;
  if (secret === null) {
    result = { ok: false, status_code: null, error: "the function has no webhook secret (POST /functions/{ref}/webhook-secret makes one)" };
  } else {
    const timestamp = Math.floor(deps.clock.now().getTime() / 1000);
    const headers = {
      "webhook-id": delivery.delivery_id,
      "webhook-timestamp": String(timestamp),
      "webhook-signature": signWebhook(secret, delivery.delivery_id, timestamp, prepared.body),
    };
    result = await postWebhook(delivery.url, headers, prepared.body, { allowLocalNetwork: deps.allowLocalNetwork, signal, ...deps.post });
  }
  return recordAttempt(deps, delivery, result);
}

/** The delivery after an attempt that got `result`. */
async function recordAttempt(deps: AttemptDeps, delivery: DeliveryItem, result: PostResult): Promise<DeliveryItem> {
  const attempts = delivery.attempts + 1;
  const now = deps.clock.now();
  const delay = result.ok ? null : retryDelayMs(attempts, deps.retryBaseMs);
  const next: DeliveryItem = {
    ...delivery,
    attempts,
    status: result.ok ? "delivered" : delay === null ? "failed" : "pending",
    last_status_code: result.status_code,
    last_error: result.error,
    next_attempt_at: delay === null ? null : new Date(now.getTime() + delay).toISOString(),
    updated_at: now.toISOString(),
  };
  if (!(await deps.store.deliveries.update(delivery, next))) return delivery;
  const outcome = next.status === "pending" ? `retry at ${next.next_attempt_at}` : next.status;
  deps.log(`webhook ${delivery.delivery_id} (run ${delivery.run_id}) attempt ${attempts}/${MAX_DELIVERY_ATTEMPTS}: ${result.ok ? `HTTP ${result.status_code}` : result.error}; ${outcome}`);
  return next;
}

/** Ends a delivery without an attempt (its function or run is gone). */
async function finish(deps: AttemptDeps, delivery: DeliveryItem, ending: { status: "failed" | "cancelled"; error: string }): Promise<DeliveryItem> {
  const next: DeliveryItem = { ...delivery, status: ending.status, last_error: ending.error, next_attempt_at: null, updated_at: deps.clock.now().toISOString() };
  return (await deps.store.deliveries.update(delivery, next)) ? next : delivery;
}
