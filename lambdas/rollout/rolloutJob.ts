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
const FunctionId = z.string().regex(/^fn_[0-9A-Za-z]{26}$/);

/** Functions whose deploy was in progress that a job keeps to come back to (more are moved at once: the deploy may fail them). */
export const MAX_PENDING = 1000;
/** Between two looks at functions still deploying once nothing else is left. */
export const DEPLOY_LOOK_MS = 10_000;

/** The runner rollout job's event (the trigger's, or the job's own continuation), parsed field by field. */
export const RolloutEvent = z
  .object({
    kind: z.literal("runner_rollout"),
    /** The layer version ARNs the rollout moves functions to: the stack's, when it was started. */
    layers: z.array(z.string().regex(/^arn:[a-z-]+:lambda:[a-z0-9-]+:\d{12}:layer:[A-Za-z0-9_-]+:\d+$/)).min(1).max(5),
    cursor: z.object({ start: TableKey.nullable(), done: Count }).strict().nullable(),
    totals: z.object({ moved: Count, current: Count, missing: Count, failed: Count }).strict(),
    /** Functions found deploying, come back to once their deploy ended (absent: none). */
    pending: z.array(FunctionId).min(1).max(MAX_PENDING).optional(),
    /** The scan is done: only `pending` is left (absent: the scan goes on from `cursor`). */
    scanned: z.literal(true).optional(),
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
  functions: {
    listEverywherePage(start: { pk: string; sk: string } | null, limit: number): Promise<{ items: FunctionItem[]; next: { pk: string; sk: string } | null }>;
    getById(functionId: string): Promise<FunctionItem | undefined>;
  };
  /**
   * The stack's runner layers as they are now (AWS: the job Lambda's configuration read afresh,
   * not this container's environment, which a stack update or rollback since its start does
   * not change). Asked before each function: a rollout whose layers are no longer the stack's
   * stops there. Absent: only the container's own layers are compared, at the start.
   */
  currentLayers?: () => Promise<string[]>;
  /** Waits between two looks at functions still deploying (default a timer). */
  sleep?: (ms: number) => Promise<void>;
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
 * function). The stack's layers are the job Lambda's environment, so a rollback (an Update back
 * to the old layer ARNs: CloudFormation puts the job's environment back first, the custom
 * resource depending on it) moves every function back the same way; and since the job reads
 * its Lambda's layers afresh before each function (`currentLayers`), a rollout the rollback
 * interrupted stops before its next function instead of moving functions forward again.
 *
 * A function whose deploy is in progress (its record `deploying`) is not touched then: a change
 * beside the deploy's would fail (or be undone by it). It is kept in `pending` and come back to
 * after the scan, once its record says the deploy ended: on the new layers then (a deploy job
 * started after the stack update), it is `current`; on the old ones (one started before), it is
 * moved. Still deploying with nothing else left, the job looks again every DEPLOY_LOOK_MS, and
 * hands on to a new invocation near its timeout as during the scan (a deploy that never ends is
 * failed by the sweeper after STALE_DEPLOY_MS).
 */
export function makeRolloutJob(deps: RolloutJobDeps) {
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
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
    const pending = [...(parsed.data.pending ?? [])];
    let start = cursor?.start ?? null;
    let skip = cursor?.done ?? 0;
    const nameOf = (fn: FunctionItem) => lambdaFunctionName(deps.functionPrefix, fn.function_id);
    /** Hands the rest to a new invocation when the time left is short; true when it did. */
    const handedOn = async (at: { cursor: RolloutEvent["cursor"]; scanned: boolean }): Promise<boolean> => {
      if (remainingMs() >= ROLLOUT_MARGIN_MS) return false;
      const next: RolloutEvent = { kind: "runner_rollout", layers, cursor: at.cursor, totals, ...(pending.length > 0 ? { pending } : {}), ...(at.scanned ? { scanned: true } : {}) };
      await deps.invoke.send(new InvokeCommand({ FunctionName: deps.jobFunction, InvocationType: "Event", Payload: JSON.stringify(next) }));
      deps.log(`runner rollout: continued in a new invocation (so far: ${summary(totals)}${pending.length > 0 ? `; ${pending.length} deploying` : ""})`);
      return true;
    };
    /** Whether the stack has other layers now (a later update, or a rollback, started a rollout of its own). */
    const superseded = async (): Promise<boolean> => {
      const current = await deps.currentLayers?.().catch((error: unknown) => {
        deps.log(`runner rollout: reading the stack's layers failed (going on): ${error instanceof Error ? error.message : String(error)}`.slice(0, 2000));
        return undefined;
      });
      if (current === undefined || current.join() === layers.join()) return false;
      deps.log(`runner rollout: superseded by the stack's layers ${current.join(", ")} (so far: ${summary(totals)}): stopped`);
      return true;
    };
    const move = async (fn: FunctionItem) => {
      const step = await moveOne(deps, fn, nameOf);
      totals[step.outcome]++;
      if (step.outcome === "moved") deps.log(`runner rollout: ${fn.function_id} (${nameOf(fn)}) moved to ${step.layers.join(", ")}`);
      if (step.outcome === "failed") deps.log(`runner rollout: ${fn.function_id} (${nameOf(fn)}) failed: ${step.reason}`.slice(0, 2000));
    };
    for (let scanning = parsed.data.scanned !== true; scanning; ) {
      const page = await deps.functions.listEverywherePage(start, deps.pageSize ?? ROLLOUT_PAGE);
      for (let index = skip; index < page.items.length; index++) {
        if (await handedOn({ cursor: { start, done: index }, scanned: false })) return { outcome: "continued", totals };
        const fn = page.items[index] as FunctionItem;
        if (fn.status === "deploying" && pending.length < MAX_PENDING && !pending.includes(fn.function_id)) {
          pending.push(fn.function_id);
          deps.log(`runner rollout: ${fn.function_id} (${nameOf(fn)}) is deploying: come back to once its deploy ended`);
          continue;
        }
        if (await superseded()) return { outcome: "superseded", totals };
        await move(fn);
      }
      skip = 0;
      if (page.next === null) scanning = false;
      else start = page.next;
    }
    // The functions found deploying, each once its deploy ended; a round with all still deploying waits DEPLOY_LOOK_MS.
    for (let stillDeploying = 0; pending.length > 0; ) {
      if (await handedOn({ cursor: null, scanned: true })) return { outcome: "continued", totals };
      if (stillDeploying >= pending.length) {
        await sleep(DEPLOY_LOOK_MS);
        stillDeploying = 0;
      }
      const functionId = pending.shift() as string;
      const fn = await deps.functions.getById(functionId);
      if (fn?.status === "deploying") {
        pending.push(functionId);
        stillDeploying++;
        continue;
      }
      stillDeploying = 0;
      if (fn && (await superseded())) return { outcome: "superseded", totals };
      if (fn) await move(fn);
      else totals.missing++;
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
