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
import { endedWithout, type Ending, type FunctionLimits, functionErrorEnding, outcomeEndingOf, resultTooDeepEnding } from "./invokeOutcome";
import type { OutcomeBucket } from "./outcomeBucket";
import { type ReportedArtifact, recordArtifacts, reportedArtifactsOf, sweepUploads } from "./recordArtifacts";
import { RUN_NOT_RECORDED } from "./runWorkflow";
import { redactorFor, redactResult } from "../../secrets/functionSecrets";
import type { SecretBox } from "../../secrets/secretBox";

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
}

export interface RecordRunDeps extends ReleaseDeps {
  store: Pick<Store, "runs" | "meters" | "limits" | "artifacts" | "secrets" | "storage">;
  outcomes: OutcomeBucket;
  /** The account's storage cap in bytes (its plan's max_storage_mb): artifacts past it are not recorded and are deleted. Absent: counted, not capped. */
  storageCap?: (accountId: string) => Promise<number>;
  /** Opens the function's secrets, whose values are redacted from what its run answered. */
  secretBox: SecretBox;
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
});

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
  return async (event: unknown): Promise<{ status: string }> => {
    const parsed = RecordInput.safeParse(event);
    if (!parsed.success) {
      deps.log(`run recorder: not a record request: ${parsed.error.issues[0]?.message ?? "invalid"}`);
      return { status: "ignored" };
    }
    const input = parsed.data;
    const run = await deps.store.runs.get(input.run_id);
    if (!run) {
      deps.log(`run recorder: no run ${input.run_id}`);
      return { status: "unknown" };
    }
    const elapsed = Math.max(0, Date.parse(input.ended_at) - Date.parse(input.started_at));
    const limits = { timeout_seconds: input.timeout_seconds, memory_mb: run.memory_mb };
    const { ending: ended, artifacts } = await endingOf(deps, run, input.ended, limits, elapsed);
    // Listed before the run is final: a caller who sees the end sees its files.
    if (!FINAL_STATUSES.includes(run.status)) await recordArtifacts(deps, run, artifacts);
    // Metered: at most the timeout, and nothing for a run that never ran (throttled, not deployed).
    const duration_ms = ended.ran ? Math.min(elapsed, input.timeout_seconds * 1000) : 0;
    // The runner redacted the function's secrets already; what it answered is not trusted to have.
    const redactor = await redactorFor(deps, run.function_id);
    const { status } = await endRun(deps, run, ended, duration_ms, (result) => redactResult(redactor, result));
    // Recorded: whatever the run uploaded (its outcome, every artifact slot, reported or not) goes.
    await sweepUploads(deps, run.run_id);
    return { status };
  };
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
  const run = await deps.store.runs.get(detail.name);
  if (!run) return "unknown";
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

async function endRun(
  deps: ReleaseDeps,
  run: RunItem,
  ending: Ending,
  duration_ms: number,
  redact: (result: InvokeResult) => InvokeResult = (result) => result,
): Promise<RunItem> {
  let final = run;
  if (!FINAL_STATUSES.includes(run.status)) {
    const result: InvokeResult = {
      status: ending.status,
      result_json: ending.result_json,
      error: ending.error,
      logs: ending.logs,
      duration_ms,
      browser_ms: ending.browser_ms,
      peak_memory_mb: ending.peak_memory_mb,
    };
    final = await finishRun(deps, run, redact(result), "now");
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

/** An ending, and whether the function ran at all (a throttled or missing Lambda did not: nothing to meter). */
export type RecordedEnding = Ending & { ran: boolean };

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
): Promise<{ ending: RecordedEnding; artifacts: ReportedArtifact[] }> {
  const ranWithout = (ending: Ending) => ({ ending: { ...ending, ran: true }, artifacts: [] });
  if (typeof ended === "object" && ended !== null && "answer" in ended) {
    const inline = (ended as { answer: unknown }).answer ?? null;
    const protocol = runnerProtocolOf(inline);
    if (protocol === null || !ACCEPTED_RUNNER_PROTOCOLS.includes(protocol)) return ranWithout(endedWithout("failed", "function_crashed", unknownRunnerMessage(protocol)));
    let answer: unknown = inline;
    let shown = () => JSON.stringify(inline) ?? "";
    if (isUploadedAnswer(inline)) {
      const uploaded = await deps.outcomes.read(run.run_id, MAX_FRAME_BYTES);
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
    return { ending: { ...outcomeEndingOf(answer, bounds, shown), ran: true }, artifacts: reportedArtifactsOf(answer) };
  }
  const caught = CaughtError.safeParse(ended);
  if (!caught.success) return ranWithout(endedWithout("failed", "function_crashed", "The run's workflow handed over neither an answer nor an error"));
  return { ending: caughtEnding(caught.data.Error, caught.data.Cause ?? "", limits), artifacts: [] };
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

/**
 * The run's ending from an error Step Functions caught around the Invoke state (or an
 * execution's own failure):
 * - `States.Timeout`: the Lambda did not answer within its timeout and the invoke margin;
 * - `Lambda.TooManyRequestsException` (after the throttle retries): concurrency_limit_exceeded;
 *   but any `Lambda.` name whose cause is a JSON error payload is the function's own error
 *   (user code chooses its error's name), mapped as a function error;
 * - `Lambda.ResourceNotFoundException`: the function's Lambda or alias is gone (deleted meanwhile);
 * - `Lambda.Unknown`: Lambda's answer named no error type, which is how Lambda stopping the
 *   function comes back (Step Functions: "Unhandled errors in Lambda are reported as
 *   Lambda.Unknown … These include out-of-memory errors and function timeouts"); its cause is
 *   Step Functions' sentence and Lambda's payload, read as functionErrorEnding reads a payload
 *   (`Task timed out after …`: timed_out; `Process exited before completing request` or a
 *   killed runtime: crashed, naming the memory limit);
 * - `States.DataLimitExceeded`: an answer over the workflow's 256 KB (the runner uploads bigger
 *   ones, so only a runner that user code tampered with gets here): result_too_large;
 * - a function error (`Sandbox.Timedout`, `Runtime.ExitError`, …, with Lambda's
 *   `{ errorType, errorMessage }` as the cause): as functionErrorEnding maps it;
 * - `RunNotRecorded` (the workflow's Fail state: the recorder failed every retry), or any other
 *   `States.` error of the workflow itself (a stopped execution, its own timeout): internal_error;
 * - any other `Lambda.` error (the Lambda service failed the invoke): function_crashed, named.
 */
export function caughtEnding(error: string, cause: string, limits: FunctionLimits): RecordedEnding {
  const ran = (ending: Ending): RecordedEnding => ({ ...ending, ran: true });
  const notRun = (ending: Ending): RecordedEnding => ({ ...ending, ran: false });
  // A function error wearing a Lambda API error's name (its cause is the function's JSON error payload) is the function's.
  if (error.startsWith("Lambda.") && cause.trimStart().startsWith("{")) return ran(functionErrorEnding(cause.slice(0, MAX_CAUSE_CHARS), limits));
  if (error === "Lambda.Unknown") return ran(functionErrorEnding(unknownPayloadOf(cause), limits));
  switch (error) {
    case "States.Timeout":
      return ran(endedWithout("timed_out", "function_timeout", `The function did not finish within its timeout of ${limits.timeout_seconds} s`));
    case "Lambda.TooManyRequestsException":
      return notRun(endedWithout("failed", "concurrency_limit_exceeded", "Lambda stayed at its concurrency limit: the run could not start; try again shortly"));
    case "Lambda.ResourceNotFoundException":
      return notRun(endedWithout("failed", "function_crashed", "The function's Lambda version is not deployed (was the function deleted or redeployed meanwhile?)"));
    case "States.DataLimitExceeded":
      return ran(endedWithout("failed", "result_too_large", "The function's answer was larger than the run workflow can carry (256 KB), and it was not uploaded"));
    case RUN_NOT_RECORDED:
      return ran(endedWithout("failed", "internal_error", "The run ended, but the service could not record its outcome (the recorder failed on every attempt)"));
  }
  if (error.startsWith("States.")) {
    return ran(endedWithout("failed", "internal_error", `The run's workflow failed (${error}${cause ? `: ${cause.slice(0, 500)}` : ""})`));
  }
  if (error.startsWith("Lambda.")) {
    return ran(endedWithout("failed", "function_crashed", `The run's workflow could not complete it (${error}${cause ? `: ${cause.slice(0, 500)}` : ""})`));
  }
  return ran(functionErrorEnding(cause || JSON.stringify({ errorType: error, errorMessage: "" }), limits));
}

/** The longest cause Step Functions keeps (its API's limit); a longer one is cut before it is read. */
const MAX_CAUSE_CHARS = 32_768;

/**
 * Step Functions' cause of a `Lambda.Unknown`: this sentence, then the payload Lambda returned
 * (e.g. `{"errorMessage":"2022-01-13T00:58:08.879Z 28931c40-… Task timed out after 60.06 seconds"}`).
 */
const UNKNOWN_CAUSE_PREFIX = "The cause could not be determined because Lambda did not return an error type. Returned payload: ";

/** The Lambda payload a `Lambda.Unknown` cause quotes (untrusted text: cut to the cause's limit first). */
function unknownPayloadOf(cause: string): string {
  const bounded = cause.slice(0, MAX_CAUSE_CHARS);
  return bounded.startsWith(UNKNOWN_CAUSE_PREFIX) ? bounded.slice(UNKNOWN_CAUSE_PREFIX.length) : bounded;
}
