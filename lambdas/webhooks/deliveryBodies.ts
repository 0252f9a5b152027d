import type { Clock } from "../deps";
import { FINAL_STATUSES, type RunItem } from "../runs/types";
import type { Store } from "../store/store";
import { buildDeliveryBody, type DeliveryBodyInput, deliveryBodyInput } from "./deliveryBody";
import type { DeliveryItem, WebhookEvent } from "./webhookTypes";

/**
 * Where an event's body is built (deliveryBody.ts's costly part): locally on the result-parsing
 * thread, accounts in turn (resultParsing/resultParser.ts), so a tenant's big results are not
 * serialised on the thread that serves requests; on AWS in the Lambda itself.
 */
export interface DeliveryBodyBuilder {
  build(accountId: string, input: DeliveryBodyInput): Promise<string>;
}

/** Builds the body where it is asked for (AWS, and tests without a thread). */
export const inlineBodyBuilder: DeliveryBodyBuilder = {
  build: async (_accountId, input) => buildDeliveryBody(input),
};

export interface BodyDeps {
  store: Pick<Store, "runs" | "deliveries">;
  clock: Clock;
  log: (line: string) => void;
  /** Default: inlineBodyBuilder. */
  bodies?: DeliveryBodyBuilder;
}

/**
 * Builds the body of a run's end once and keeps it beside the run (DeliveryStore.putBody), at
 * the end itself, where the final record is at hand: every attempt of every delivery of the run
 * then sends it without reading the run (its result can be megabytes) or building it again.
 * Never throws: a body not kept now is built by the first attempt (bodyForAttempt).
 */
export async function keepDeliveryBody(deps: BodyDeps, run: RunItem, event: WebhookEvent): Promise<void> {
  try {
    const body = await (deps.bodies ?? inlineBodyBuilder).build(run.account_id, deliveryBodyInput(event, run));
    await keep(deps, run, event, body);
  } catch (error) {
    deps.log(`webhook body of run ${run.run_id}: not kept (${(error as Error).message.slice(0, 200)}); its first attempt builds it`);
  }
}

/** What an attempt sends, or why it cannot send anything (the delivery then ends `failed`). */
export type AttemptBody = { body: string } | { failed: string };

/**
 * The body a delivery's attempt sends: the one kept for its run (keepDeliveryBody), or, when none
 * was (a run's end made into deliveries after a restart, a body too big to keep, or a delivery of
 * an earlier version), built from the run's stored final record and kept for the next attempts.
 */
export async function bodyForAttempt(deps: BodyDeps, delivery: DeliveryItem): Promise<AttemptBody> {
  const kept = await deps.store.deliveries.getBody(delivery.run_id);
  if (kept && kept.function_id === delivery.function_id && kept.account_id === delivery.account_id && kept.event === delivery.event) return { body: kept.body };
  const run = await deps.store.runs.get(delivery.run_id);
  if (!run || !FINAL_STATUSES.includes(run.status) || run.function_id !== delivery.function_id) return { failed: "the run is no longer stored" };
  let body: string;
  try {
    body = await (deps.bodies ?? inlineBodyBuilder).build(delivery.account_id, deliveryBodyInput(delivery.event, run));
  } catch (error) {
    // Not a failure a retry can mend: the delivery ends, with why, and never holds a slot again.
    return { failed: `its body could not be built (${(error as Error).message.slice(0, 200)}); GET /runs/${run.run_id} shows the run` };
  }
  await keep(deps, run, delivery.event, body).catch((error: unknown) => deps.log(`webhook body of run ${run.run_id}: not kept (${(error as Error).message}); the next attempt builds it again`));
  return { body };
}

async function keep(deps: BodyDeps, run: RunItem, event: WebhookEvent, body: string): Promise<void> {
  const item = { run_id: run.run_id, account_id: run.account_id, function_id: run.function_id, event, body, created_at: deps.clock.now().toISOString() };
  if (!(await deps.store.deliveries.putBody(item))) deps.log(`webhook body of run ${run.run_id}: ${Buffer.byteLength(body)} bytes, too big to keep; each attempt builds it`);
}
