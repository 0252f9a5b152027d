import type { RunStatus } from "../runs/types";

/** The events a webhook may subscribe to: a run's end, one per final status. */
export const WEBHOOK_EVENTS = ["run.succeeded", "run.failed", "run.timed_out", "run.canceled"] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** At most this many webhooks per function. */
export const MAX_WEBHOOKS = 5;
/** The longest webhook URL accepted. */
export const MAX_WEBHOOK_URL_CHARS = 2048;

/** One of a function's webhooks, as stored and as the record shows it. */
export interface Webhook {
  url: string;
  events: WebhookEvent[];
}

/** The event a run's final status raises (null for a run that has not ended). */
export function eventOfStatus(status: RunStatus): WebhookEvent | null {
  if (status === "succeeded") return "run.succeeded";
  if (status === "failed") return "run.failed";
  if (status === "timed_out") return "run.timed_out";
  if (status === "canceled") return "run.canceled";
  return null;
}

/**
 * A delivery a run's end owes one webhook: written on the run's final item, in the same
 * conditional write that ends the run (see runEndWebhooks.ts), then as a delivery item.
 */
export interface PendingDelivery {
  /** The Standard Webhooks `webhook-id`: `msg_` + the run's ULID + `_` + the webhook's index; the same on every retry. */
  delivery_id: string;
  url: string;
  event: WebhookEvent;
}

export type DeliveryStatus = "pending" | "delivered" | "failed" | "cancelled";

/** One delivery (one event to one webhook) with its attempts so far. */
export interface DeliveryItem {
  delivery_id: string;
  account_id: string;
  function_id: string;
  run_id: string;
  event: WebhookEvent;
  url: string;
  status: DeliveryStatus;
  attempts: number;
  /** The HTTP status of the last attempt (null: none yet, or it got no answer). */
  last_status_code: number | null;
  /** Why the last attempt failed (refused target, timeout, connection error, status), or null. */
  last_error: string | null;
  /** When the next attempt is due (null once delivered, failed or cancelled). */
  next_attempt_at: string | null;
  created_at: string;
  updated_at: string;
}

/** The delivery id of webhook `index` for a run's end (a run ends once, so this names one event). */
export function deliveryIdOf(runId: string, index: number): string {
  return `msg_${runId.replace(/^run_/, "")}_${index}`;
}

/**
 * The body a run's end sends to each of its webhooks (they all get the same event), built once
 * and kept: every attempt of every delivery of the run sends these bytes, signed anew.
 */
export interface DeliveryBodyItem {
  run_id: string;
  account_id: string;
  function_id: string;
  event: WebhookEvent;
  /** The JSON text sent, at most MAX_DELIVERY_BODY_BYTES (deliveryBody.ts). */
  body: string;
  created_at: string;
}
