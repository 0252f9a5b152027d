import { toRunView } from "../runs/toRunView";
import type { RunItem } from "../runs/types";
import type { WebhookEvent } from "./webhookTypes";

/** The largest body a delivery sends: past it, the run's result, then its logs, then its params are left out. */
export const MAX_DELIVERY_BODY_BYTES = 256 * 1024;

/**
 * The body of an event: `{type, timestamp, data: {run}}` with the run as `GET /runs/{id}` shows
 * it, built from the stored final record. When it would be over MAX_DELIVERY_BODY_BYTES, the
 * largest parts are left out in turn (result → null, logs → "", params → {}) and
 * `data.omitted` names them (`GET /runs/{id}` has them whole).
 */
export function deliveryBody(event: WebhookEvent, run: RunItem): string {
  // A result over the cap is left out without being parsed (it can be megabytes).
  const resultFits = run.result_json === null || Buffer.byteLength(run.result_json) <= MAX_DELIVERY_BODY_BYTES;
  const view = toRunView(resultFits ? run : { ...run, result_json: null });
  const omitted: string[] = resultFits ? [] : ["result"];
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
