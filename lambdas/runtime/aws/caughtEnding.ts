import { endedWithout, type Ending, type FunctionLimits, functionErrorEnding } from "./invokeOutcome";
import { RUN_NOT_RECORDED } from "./runWorkflow";

/** An ending, and whether the function ran at all (a throttled or missing Lambda did not: nothing to meter). */
export type RecordedEnding = Ending & { ran: boolean };

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
