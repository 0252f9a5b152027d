import { z } from "zod";
import { ACCEPTED_RUNNER_PROTOCOLS, isUploadedAnswer, runnerProtocolOf } from "../../runner/lambdaPackage";
import { MAX_FRAME_BYTES } from "../../runner/protocol";
import { jsonTextDeeperThan } from "../../runner/jsonDepth";
import { MAX_JSON_DEPTH, resultTooLarge } from "../../runner/outputLimits";
import { canceledEnding } from "../../runs/cancel/canceledEnding";
import { finishRun, type FinishRunDeps } from "../../runs/finishRun";
import { FINAL_STATUSES, type RunItem, runTimeoutMs } from "../../runs/types";
import type { LimitItem } from "../../store/limitStore";
import type { Store } from "../../store/store";
import type { InvokeResult } from "../runtime";
import { caughtEnding, type RecordedEnding } from "./caughtEnding";
import { endedWithout, type Ending, type FunctionLimits, outcomeEndingOf, resultTooDeepEnding } from "./invokeOutcome";
import type { OutcomeBucket } from "./outcomeBucket";
import type { UploadedRecordings } from "../../recording/aws/uploadedRecordings";
import { type ReportedArtifact, recordArtifacts, reportedArtifactsOf, sweepUploads } from "./recordArtifacts";
import type { AttemptRetry } from "./recordRetry";
import type { RunEndNotifier } from "./runEnds/notifyRunEnd";
import { waitOutThrottle, waitsOutThrottle } from "./throttleWait";
import { runOfExecution } from "./runExecutions";
import type { RecordRunAnswer } from "./runWorkflow";
import { attemptLogs, shouldRetry } from "../../retries/retryPolicy";
import { redactorFor, redactResult } from "../../secrets/functionSecrets";
import type { SecretBox } from "../../secrets/secretBox";
import { type RecordProfilesDeps, recordRunProfiles, releaseRunProfiles, reportedTooLargeOf } from "../../profiles/aws/recordRunProfiles";

/**
 * Starts the account's queued runs while its plan has free slots, and resolves once that is
 * done (AWS: before the Lambda is frozen); `limits` is the LIMITS item as the release left it.
 * Never rejects (awsDispatch.ts).
 */
export type QueueDispatch = (accountId: string, limits?: LimitItem) => Promise<void>;

/** Who releases a run's lease: when runs wait for it, the queue is dispatched (absent: nothing is). */
export interface ReleaseDeps extends FinishRunDeps {
  store: Pick<Store, "runs" | "meters" | "limits">;
  dispatch?: QueueDispatch;
  /** Queues a failed attempt's run for its next one (recordRetry.ts; absent: runs are not retried). */
  retry?: AttemptRetry;
  /** Profiles' states and records (lambdas/profiles/aws): a run's saves are adopted, its leases given back. Absent: runs hold none. */
  profiles?: Omit<RecordProfilesDeps, "clock" | "log">;
}

export interface RecordRunDeps extends ReleaseDeps {
  store: Pick<Store, "runs" | "meters" | "limits" | "artifacts" | "secrets" | "storage">;
  outcomes: OutcomeBucket;
  /** The account's storage cap in bytes (its plan's max_storage_mb): artifacts past it are not recorded and are deleted. Absent: counted, not capped. */
  storageCap?: (accountId: string) => Promise<number>;
  /** The recordings runs upload, re-checked before they are kept (absent: none is kept). */
  recordings?: UploadedRecordings;
  /** Opens the function's secrets, whose values are redacted from what its run answered. */
  secretBox: SecretBox;
  /** How long a run that waits for a throttled Lambda waits between rounds (default LAMBDA_THROTTLE_WAIT.waitMs). */
  throttleWaitMs?: number;
  /** Tells the route waiting for a run (its execution input's `notify`) that the end is written (runEnds/notifyRunEnd.ts). */
  notifyEnd?: RunEndNotifier;
}

/**
 * The recorder's input (runWorkflow.ts, the Record state): the run id, its timeout and both
 * times come from the execution's input and Step Functions' clock; only `ended` comes from the
 * function's Lambda, and is parsed as untrusted below.
 */
const RecordInput = z.object({
  run_id: z.string().min(1).max(100),
  timeout_seconds: z.number().int().min(1).max(900),
  started_at: z.string().datetime({ offset: true }),
  ended_at: z.string().datetime({ offset: true }),
  ended: z.unknown(),
  // Absent in the input of an execution started before retries on AWS: its first attempt.
  attempt: z.number().int().min(1).max(100).optional(),
  execution_arn: z.string().min(1).max(2048).optional(),
  // The waiting route's wait queue (null or absent: nobody waits); notifyEnd checks it is one.
  notify: z.string().min(1).max(1024).nullable().optional(),
});

/** The workflow's WakeQueue state: a run's next attempt is due, start the account's queued runs. */
const WakeInput = z.object({ wake_account: z.string().min(1).max(200) });

/** The answer of a recorder that leaves the workflow nothing more to do. */
const done = (status: string): RecordRunAnswer => ({ status, retry_at: null, account_id: null, reinvoke: false });

/** Step Functions' description of an error it caught. */
const CaughtError = z.object({ Error: z.string().max(1000), Cause: z.string().optional() });

/**
 * The recorder Lambda, invoked by the run workflow only (the function's role may not invoke
 * it): ends one run with what its Lambda answered, or with the error Step Functions caught,
 * and meters it once (finishRun keeps a record that is final already). An answer that marks
 * an uploaded outcome is read from the outcome bucket. Nothing of the answer but the parsed
 * outcome's named fields reaches the record. Store failures throw (the workflow retries).
 */
export function makeRunRecorder(deps: RecordRunDeps) {
  return async (event: unknown): Promise<RecordRunAnswer> => {
    const wake = WakeInput.safeParse(event);
    if (wake.success) {
      await deps.dispatch?.(wake.data.wake_account);
      return done("woken");
    }
    const parsed = RecordInput.safeParse(event);
    if (!parsed.success) {
      deps.log(`run recorder: not a record request: ${parsed.error.issues[0]?.message ?? "invalid"}`);
      return done("ignored");
    }
    const input = parsed.data;
    const run = await deps.store.runs.get(input.run_id);
    if (!run) {
      deps.log(`run recorder: no run ${input.run_id}`);
      return done("unknown");
    }
    // An attempt recorded already, which queued the run's next one (a retried Record state):
    // the workflow is told again when that is due; nothing is written twice.
    if ((run.attempt ?? 1) !== (input.attempt ?? 1)) return waitingAnswer(run, input.attempt ?? 1);
    const elapsed = Math.max(0, Date.parse(input.ended_at) - Date.parse(input.started_at));
    const limits = { timeout_seconds: input.timeout_seconds, memory_mb: run.memory_mb };
    const { ending: recordedEnding, artifacts, tooLarge } = await endingOf(deps, run, input.ended, limits, elapsed, input.attempt ?? 1);
    let ended = recordedEnding;
    // Lambda stayed throttled through the quick retries: a run nobody waits for waits for Lambda instead of failing.
    if (!ended.ran && ended.error?.code === "concurrency_limit_exceeded" && waitsOutThrottle(run, deps.clock.now())) {
      const waiting = await waitOutThrottle(deps, run, deps.clock.now(), input.timeout_seconds, deps.throttleWaitMs);
      if (waiting) return waiting;
    }
    // The runner redacted the function's secrets already; what it answered (and uploaded) is not trusted to have.
    const redactor = await redactorFor(deps, run.function_id);
    // Listed before the run is final: a caller who sees the end sees its files.
    if (!FINAL_STATUSES.includes(run.status)) await recordArtifacts(deps, run, artifacts, input.attempt ?? 1, redactor);
    // Its profiles' saves are kept (a run that succeeded) before its end is written, and its leases go back.
    if (deps.profiles) {
      const succeeded = ended.status === "succeeded" && !FINAL_STATUSES.includes(run.status);
      const refused = await recordRunProfiles({ ...deps.profiles, clock: deps.clock, log: deps.log }, run.run_id, input.attempt ?? 1, { succeeded, tooLarge });
      if (refused) ended = { ...ended, status: "failed", result_json: null, error: refused };
    }
    // Metered: at most the timeout, and nothing for a run that never ran (throttled, not deployed).
    const duration_ms = ended.ran ? Math.min(elapsed, input.timeout_seconds * 1000) : 0;
    const recorded = await endRun(deps, run, ended, duration_ms, (result) => redactResult(redactor, result), input.execution_arn);
    if (input.notify && FINAL_STATUSES.includes(recorded.status)) await deps.notifyEnd?.(input.notify, run.run_id);
    // Recorded: whatever the attempt uploaded (its outcome, every artifact slot, reported or not) goes.
    await sweepUploads(deps, run.run_id, input.attempt ?? 1);
    return waitingAnswer(recorded, input.attempt ?? 1);
  };
}

/** What the workflow is told of a run after attempt `attempt` ended: its next attempt's time when it waits for it. */
function waitingAnswer(run: RunItem, attempt: number): RecordRunAnswer {
  if (run.status === "queued" && run.retry_at && run.attempt === attempt + 1) return { status: run.status, retry_at: run.retry_at, account_id: run.account_id, reinvoke: false };
  return done(run.status);
}

/**
 * Ends a run whose workflow execution failed, timed out or was stopped without recording it
 * (EventBridge's "Step Functions Execution Status Change"): an answer too big for the
 * workflow's state (States.DataLimitExceeded, which no Catch can take), the execution's own
 * timeout, or a recorder that failed every retry. A run recorded already is left as it is.
 */
export async function recordExecutionEnd(
  deps: ReleaseDeps,
  detail: { name: string; status: string; error?: string | null; cause?: string | null; startDate?: number; stopDate?: number },
): Promise<string> {
  const { runId, attempt } = runOfExecution(detail.name);
  const run = await deps.store.runs.get(runId);
  if (!run) return "unknown";
  // The attempt's execution is over, however it ended: its profiles' leases go back, its unadopted saves go.
  if (deps.profiles) await releaseRunProfiles(deps.profiles, runId, attempt);
  // An execution of an earlier attempt (ended after its Record state: in WaitRetry, say): the
  // run has gone on, and its lease is the later attempt's.
  if ((run.attempt ?? 1) > attempt) return run.status;
  // A stopped execution is a canceled run (POST /runs/{run_id}/cancel stops it). Its Lambda
  // invocation may still run: its lease is not given back here (see AWS Runtime.cancel).
  if (run.status === "canceled") return run.status;
  if (detail.status === "ABORTED" && !FINAL_STATUSES.includes(run.status)) return (await finishRun(deps, run, canceledEnding(run, deps.clock.now()), "now")).status;
  if (FINAL_STATUSES.includes(run.status)) {
    await releaseLease(deps, run);
    return run.status;
  }
  const started = detail.startDate ?? Date.parse(run.started_at ?? run.queued_at);
  const elapsed = Math.max(0, (detail.stopDate ?? deps.clock.now().getTime()) - started);
  const timeoutSeconds = Math.max(1, Math.round(runTimeoutMs(run) / 1000));
  const error = detail.error ?? (detail.status === "ABORTED" ? "States.Aborted" : `States.${detail.status}`);
  const ending = caughtEnding(error, detail.cause ?? "", { timeout_seconds: timeoutSeconds, memory_mb: run.memory_mb });
  return (await endRun(deps, run, ending, ending.ran ? Math.min(elapsed, timeoutSeconds * 1000) : 0)).status;
}

/**
 * Ends the run's current attempt: the run's end (finishRun: final record, webhooks, metered
 * now), then its lease given back and the queue dispatched. But a failed attempt that the run's
 * `retries` allow again (shouldRetry), recorded by its workflow (`executionArn`), queues the run
 * for its next attempt instead (deps.retry): its lease went back in that write, so none is
 * released here. Each attempt's logs start with a header naming it (attemptLogs).
 */
async function endRun(
  deps: ReleaseDeps,
  run: RunItem,
  ending: Ending,
  duration_ms: number,
  redact: (result: InvokeResult) => InvokeResult = (result) => result,
  executionArn?: string,
): Promise<RunItem> {
  let final = run;
  if (!FINAL_STATUSES.includes(run.status)) {
    const redacted = redact({
      status: ending.status,
      result_json: ending.result_json,
      error: ending.error,
      logs: ending.logs,
      duration_ms,
      browser_ms: ending.browser_ms,
      peak_memory_mb: ending.peak_memory_mb,
    });
    const result: InvokeResult = { ...redacted, logs: attemptLogs(run, redacted.logs) };
    if (executionArn !== undefined && deps.retry && shouldRetry(run, result)) {
      const next = await deps.retry(run, result, executionArn);
      if (next) return next;
    }
    final = await finishRun(deps, run, result, "now");
  }
  await releaseLease(deps, run);
  return final;
}

/**
 * Gives the run's lease back; when runs of its account wait in the run queue, starts them
 * here (the release's own answer is the dispatcher's first look at the LIMITS item).
 */
async function releaseLease(deps: ReleaseDeps, run: RunItem): Promise<void> {
  const { queued, item } = await deps.store.limits.release(run.account_id, run.run_id);
  if (queued > 0) await deps.dispatch?.(run.account_id, item);
}


/**
 * How the run ended, from what the Invoke state left: `{ answer }` (read from the outcome
 * bucket when the runner uploaded it) or a caught `{ Error, Cause }`; and the artifact names
 * the answer reports. The answer is parsed once.
 */
async function endingOf(
  deps: RecordRunDeps,
  run: RunItem,
  ended: unknown,
  limits: FunctionLimits,
  durationMs: number,
  attempt: number,
): Promise<{ ending: RecordedEnding; artifacts: ReportedArtifact[]; tooLarge: string[] }> {
  const ranWithout = (ending: Ending) => ({ ending: { ...ending, ran: true }, artifacts: [], tooLarge: [] });
  if (typeof ended === "object" && ended !== null && "answer" in ended) {
    const inline = (ended as { answer: unknown }).answer ?? null;
    const protocol = runnerProtocolOf(inline);
    if (protocol === null || !ACCEPTED_RUNNER_PROTOCOLS.includes(protocol)) return ranWithout(endedWithout("failed", "function_crashed", unknownRunnerMessage(protocol)));
    let answer: unknown = inline;
    let shown = () => JSON.stringify(inline) ?? "";
    if (isUploadedAnswer(inline)) {
      const uploaded = await deps.outcomes.read(run.run_id, MAX_FRAME_BYTES, attempt);
      if (uploaded === null) return ranWithout(endedWithout("failed", "function_crashed", "The function's runner said it uploaded its outcome, but there is none"));
      if ("tooLarge" in uploaded) {
        const { code, message } = resultTooLarge(uploaded.tooLarge);
        return ranWithout(endedWithout("failed", code, message));
      }
      // Counted before it is parsed: an answer nested deeper than a runner's can be is not read at all.
      if (jsonTextDeeperThan(uploaded.text, MAX_JSON_DEPTH)) return ranWithout(resultTooDeepEnding());
      answer = parseJson(uploaded.text);
      shown = () => uploaded.text;
    }
    const bounds = { maxBrowserMs: durationMs, memoryMb: limits.memory_mb };
    return { ending: { ...outcomeEndingOf(answer, bounds, shown), ran: true }, artifacts: reportedArtifactsOf(answer), tooLarge: reportedTooLargeOf(answer) };
  }
  const caught = CaughtError.safeParse(ended);
  if (!caught.success) return ranWithout(endedWithout("failed", "function_crashed", "The run's workflow handed over neither an answer nor an error"));
  return { ending: caughtEnding(caught.data.Error, caught.data.Cause ?? "", limits), artifacts: [], tooLarge: [] };
}

/** Why the answer of a runner speaking `protocol` (null: not a number) is not read. */
function unknownRunnerMessage(protocol: number | null): string {
  const spoken = protocol === null ? "an unreadable runner protocol" : `runner protocol ${protocol}`;
  return `The function's runner speaks ${spoken}; this service reads protocols ${ACCEPTED_RUNNER_PROTOCOLS.join(" and ")} only. The stack's runner rollout moves each function's live version to the current runner; redeploy the function to run this version on it`;
}

/** JSON text's value; undefined when it is none (the outcome schema then says the answer is malformed). */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export { caughtEnding, type RecordedEnding } from "./caughtEnding";
