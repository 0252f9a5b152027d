import { InvokeCommand } from "@aws-sdk/client-lambda";
import { z } from "zod";
import type { FunctionItem } from "../functions/types";
import type { LambdaSetup } from "../runtime/aws/deployLambda";
import type { LambdaSend } from "../runtime/aws/lambdaClient";
import { lambdaFunctionName } from "../runtime/aws/runExecutions";
import { rollOutRunner, type RolloutStep } from "../runtime/aws/runnerRollout";

/** A position in the scan of every function: the page's start key, and how many of that page are done. */
const TableKey = z.object({ pk: z.string().min(1).max(1024), sk: z.string().min(1).max(1024) }).strict();
const Count = z.int().min(0).max(100_000_000);

/** The runner rollout job's event (the trigger's, or the job's own continuation), parsed field by field. */
export const RolloutEvent = z
  .object({
    kind: z.literal("runner_rollout"),
    /** The layer version ARNs the rollout moves functions to: the stack's, when it was started. */
    layers: z.array(z.string().regex(/^arn:[a-z-]+:lambda:[a-z0-9-]+:\d{12}:layer:[A-Za-z0-9_-]+:\d+$/)).min(1).max(5),
    cursor: z.object({ start: TableKey.nullable(), done: Count }).strict().nullable(),
    totals: z.object({ moved: Count, current: Count, missing: Count, failed: Count }).strict(),
  })
  .strict();
export type RolloutEvent = z.infer<typeof RolloutEvent>;
export type RolloutTotals = RolloutEvent["totals"];

export interface RolloutJobDeps {
  /** Lambda's control plane (the SDK's standard retries). */
  send: LambdaSend;
  /** What every function's Lambda gets: the stack's current layers among it. */
  setup: LambdaSetup;
  functionPrefix: string;
  functions: { listEverywherePage(start: { pk: string; sk: string } | null, limit: number): Promise<{ items: FunctionItem[]; next: { pk: string; sk: string } | null }> };
  /** Invokes the job's own Lambda (InvocationType `Event`) to go on near its timeout. */
  invoke: { send(command: InvokeCommand): Promise<unknown> };
  /** The job's own Lambda's name. */
  jobFunction: string;
  /** Items read per scan page (ROLLOUT_PAGE). */
  pageSize?: number;
  log(line: string): void;
}

/** Items read per scan page. */
export const ROLLOUT_PAGE = 50;
/**
 * Time a function's move may take at most (Runtime.configure: the update, a wait of up to
 * activeTimeoutMs for it to become Active, the publish and two aliases), plus room: a job with
 * less left hands the rest to a new invocation before it starts another function.
 */
export const ROLLOUT_MARGIN_MS = 4 * 60_000;

export type RolloutJobOutcome = "finished" | "continued" | "superseded" | "invalid";

const summary = (totals: RolloutTotals) => `moved ${totals.moved}, current ${totals.current}, missing ${totals.missing}, failed ${totals.failed}`;

/**
 * The runner rollout job (docs/deploy.md, "Runner rollout"): moves every function's live alias
 * to the stack's current runner layers with rollOutRunner, one function at a time, in the
 * order of a scan of the table. It logs each function moved or failed and, at the end, one
 * summary line. Before each function it checks the time left: with less than ROLLOUT_MARGIN_MS
 * it starts itself again with the position reached and the totals so far, and stops. It is
 * idempotent: a function already on the layers is `current` and untouched, so a job run twice
 * (Lambda's retries, a re-run by hand) only reads. An event for other layers than the stack's
 * is a rollout a later stack update superseded: it is dropped (the later one covers every
 * function).
 */
export function makeRolloutJob(deps: RolloutJobDeps) {
  return async (event: unknown, remainingMs: () => number): Promise<{ outcome: RolloutJobOutcome; totals?: RolloutTotals }> => {
    const parsed = RolloutEvent.safeParse(event);
    if (!parsed.success) {
      deps.log(`runner rollout: dropped an invalid event: ${parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ")}`.slice(0, 2000));
      return { outcome: "invalid" };
    }
    const { layers, cursor } = parsed.data;
    if (layers.join() !== deps.setup.layers.join()) {
      deps.log(`runner rollout: superseded (its layers ${layers.join(", ")} are not the stack's ${deps.setup.layers.join(", ")}): dropped`);
      return { outcome: "superseded" };
    }
    const totals: RolloutTotals = { ...parsed.data.totals };
    let start = cursor?.start ?? null;
    let skip = cursor?.done ?? 0;
    const nameOf = (fn: FunctionItem) => lambdaFunctionName(deps.functionPrefix, fn.function_id);
    for (;;) {
      const page = await deps.functions.listEverywherePage(start, deps.pageSize ?? ROLLOUT_PAGE);
      for (let index = skip; index < page.items.length; index++) {
        if (remainingMs() < ROLLOUT_MARGIN_MS) {
          const next: RolloutEvent = { kind: "runner_rollout", layers, cursor: { start, done: index }, totals };
          await deps.invoke.send(new InvokeCommand({ FunctionName: deps.jobFunction, InvocationType: "Event", Payload: JSON.stringify(next) }));
          deps.log(`runner rollout: continued in a new invocation (so far: ${summary(totals)})`);
          return { outcome: "continued", totals };
        }
        const fn = page.items[index] as FunctionItem;
        const step = await moveOne(deps, fn, nameOf);
        totals[step.outcome]++;
        if (step.outcome === "moved") deps.log(`runner rollout: ${fn.function_id} (${nameOf(fn)}) moved to ${step.layers.join(", ")}`);
        if (step.outcome === "failed") deps.log(`runner rollout: ${fn.function_id} (${nameOf(fn)}) failed: ${step.reason}`.slice(0, 2000));
      }
      skip = 0;
      if (page.next === null) break;
      start = page.next;
    }
    deps.log(`runner rollout finished: layers ${layers.join(", ")}: ${summary(totals)}`);
    return { outcome: "finished", totals };
  };
}

/** One function's step; an error rollOutRunner lets through (its live alias unreadable) is that function's failure, not the job's. */
async function moveOne(deps: RolloutJobDeps, fn: FunctionItem, nameOf: (fn: FunctionItem) => string): Promise<RolloutStep> {
  try {
    const [step] = await rollOutRunner(deps.send, deps.setup, [fn], nameOf);
    return step ?? { function_id: fn.function_id, outcome: "failed", reason: "no step" };
  } catch (error) {
    return { function_id: fn.function_id, outcome: "failed", reason: error instanceof Error ? error.message : String(error) };
  }
}
