import type { FunctionItem } from "../../functions/types";
import type { RunOutcome } from "../../runner/protocol";
import type { InvokeResult } from "../runtime";

/** The settings an ending's message names. */
export type FunctionLimits = Pick<FunctionItem, "timeout_seconds" | "memory_mb">;

export type Ending = Pick<InvokeResult, "status" | "result_json" | "error" | "logs" | "browser_ms" | "peak_memory_mb">;

/** An ending without output: the runner could not report one. */
export function endedWithout(status: "failed" | "timed_out", code: string, message: string): Ending {
  return { status, result_json: null, error: { code, message }, logs: "", browser_ms: 0, peak_memory_mb: null };
}

/**
 * Turns a Lambda function error (`{ errorType, errorMessage }`, as a destination event's
 * responsePayload carries it) into the run's ending.
 * Our handler never throws for the user's code, so each of these means Lambda stopped it:
 * - `Sandbox.Timedout`, or "Task timed out after …": timed_out / function_timeout;
 * - `Runtime.OutOfMemory`, or a message about running out of memory or the runtime being
 *   killed by a signal (how Lambda reports an OOM kill): failed / function_crashed;
 * - `Function.ResponseSizeTooLarge` (the result passed Lambda's 6 MB answer limit):
 *   failed / result_not_serializable;
 * - anything else (`Runtime.ExitError`, an `Unhandled` error of the runner): failed /
 *   function_crashed with Lambda's message.
 */
export function functionErrorEnding(payload: string, fn: FunctionLimits): Ending {
  let errorType = "";
  let errorMessage = payload;
  try {
    const parsed = JSON.parse(payload) as { errorType?: unknown; errorMessage?: unknown };
    errorType = typeof parsed.errorType === "string" ? parsed.errorType : "";
    errorMessage = typeof parsed.errorMessage === "string" ? parsed.errorMessage : "";
  } catch {
    // not JSON: the payload itself is the message
  }
  if (errorType === "Sandbox.Timedout" || /Task timed out after/i.test(errorMessage)) {
    return endedWithout("timed_out", "function_timeout", `The function did not finish within its timeout of ${fn.timeout_seconds} s`);
  }
  if (errorType === "Runtime.OutOfMemory" || /out of memory|Runtime exited.*signal: killed/i.test(errorMessage)) {
    return endedWithout("failed", "function_crashed", `The function ran out of memory: its limit is ${fn.memory_mb} MB`);
  }
  if (errorType === "Function.ResponseSizeTooLarge") {
    return endedWithout("failed", "result_not_serializable", `The return value is larger than Lambda's response limit: ${errorMessage}`);
  }
  const what = [errorType, errorMessage].filter(Boolean).join(": ") || "Lambda reported an error without a message";
  return endedWithout("failed", "function_crashed", `The function's process crashed: ${what}`);
}

function isOutcome(value: unknown): value is RunOutcome {
  const outcome = value as Partial<RunOutcome> | null;
  if (typeof outcome !== "object" || outcome === null || typeof outcome.logs !== "string" || typeof outcome.browser_ms !== "number") {
    return false;
  }
  if (outcome.status === "succeeded") return typeof outcome.result_json === "string";
  return outcome.status === "failed" && typeof outcome.error?.code === "string" && typeof outcome.error.message === "string";
}

/** The run's ending from a successful invocation: the runner's RunOutcome (its stack trace dropped). */
export function outcomeEnding(payload: string): Ending {
  let outcome: unknown;
  try {
    outcome = JSON.parse(payload);
  } catch {
    outcome = undefined;
  }
  if (!isOutcome(outcome)) {
    return endedWithout("failed", "function_crashed", `The function's runner gave an answer that is not a run outcome: ${payload.slice(0, 200)}`);
  }
  const { logs, browser_ms } = outcome;
  // The runner's own measure of its container (the Node process and its browser); older runners send none.
  const peak_memory_mb = typeof outcome.peak_memory_mb === "number" && outcome.peak_memory_mb > 0 ? Math.round(outcome.peak_memory_mb) : null;
  if (outcome.status === "succeeded") return { status: "succeeded", result_json: outcome.result_json, error: null, logs, browser_ms, peak_memory_mb };
  return { status: "failed", result_json: null, error: { code: outcome.error.code, message: outcome.error.message }, logs, browser_ms, peak_memory_mb };
}
