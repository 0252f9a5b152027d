import { toRunView } from "../runs/toRunView";
import type { RunItem } from "../runs/types";
import type { WebhookEvent } from "./webhookTypes";

/** The largest body a delivery sends: past it, the run's result, then its logs, then its params are left out. */
export const MAX_DELIVERY_BODY_BYTES = 256 * 1024;

/**
 * What an event's body is built from: the event and the run's final record, whose result is
 * not carried at all when it is over MAX_DELIVERY_BODY_BYTES (it can be megabytes, and would be
 * left out anyway): `resultOmitted` says so.
 */
export interface DeliveryBodyInput {
  event: WebhookEvent;
  run: RunItem;
  resultOmitted: boolean;
}

/** The input of an event's body (cheap: a result over the cap is measured, never parsed or copied). */
export function deliveryBodyInput(event: WebhookEvent, run: RunItem): DeliveryBodyInput {
  const json = run.result_json;
  // A string's UTF-8 length is at least its length in code units: the long ones are over without a scan.
  const resultFits = json === null || (json.length <= MAX_DELIVERY_BODY_BYTES && Buffer.byteLength(json) <= MAX_DELIVERY_BODY_BYTES);
  return { event, run: resultFits ? run : { ...run, result_json: null }, resultOmitted: !resultFits };
}

/**
 * The body of an event: `{type, timestamp, data: {run}}` with the run as `GET /runs/{id}` shows
 * it, built from the stored final record. When it would be over MAX_DELIVERY_BODY_BYTES, the
 * largest parts are left out in turn (result → null, logs → "", params → {}) and
 * `data.omitted` names them (`GET /runs/{id}` has them whole). The costly part (the result's
 * parse and the body's serialisation): a run's deliveries build it once (deliveryBodies.ts).
 */
export function buildDeliveryBody({ event, run, resultOmitted }: DeliveryBodyInput): string {
  const view = toRunView(run);
  const omitted: string[] = resultOmitted ? ["result"] : [];
  const body = () =>
    JSON.stringify({
      type: event,
      timestamp: run.finished_at ?? new Date(0).toISOString(),
      data: omitted.length === 0 ? { run: view } : { run: view, omitted },
    });
  let text = body();
  const cuts: [string, () => void][] = [
    ["result", () => (view.result = null)],
    ["logs", () => (view.logs = "")],
    ["params", () => (view.params = {})],
  ];
  for (const [field, cut] of cuts) {
    if (Buffer.byteLength(text) <= MAX_DELIVERY_BODY_BYTES) break;
    if (!omitted.includes(field)) omitted.push(field);
    cut();
    text = body();
  }
  return text;
}

/** The body of an event, built here and now (see buildDeliveryBody). */
export function deliveryBody(event: WebhookEvent, run: RunItem): string {
  return buildDeliveryBody(deliveryBodyInput(event, run));
}
