import type { FunctionItem } from "../../functions/types";
import { jsonTextDeeperThan, valueDeeperThan } from "../../runner/jsonDepth";
import { MAX_JSON_DEPTH, parseRunOutcome, resultTooDeep, resultTooLarge } from "../../runner/outcomeSchema";
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
 * - "Process exited before completing request" (no error type: how older runtimes report an
 *   OOM kill, or any exit of the process): failed / function_crashed, naming the memory limit
 *   as the likely cause;
 * - `Function.ResponseSizeTooLarge` (the result passed Lambda's 6 MB answer limit):
 *   failed / result_too_large, as the runner reports a result over the same limit;
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
  // Untrusted text: only its start is searched.
  const head = errorMessage.slice(0, MAX_LAMBDA_MESSAGE_CHARS);
  if (errorType === "Sandbox.Timedout" || /Task timed out after/i.test(head)) {
    return endedWithout("timed_out", "function_timeout", `The function did not finish within its timeout of ${fn.timeout_seconds} s`);
  }
  if (errorType === "Runtime.OutOfMemory" || /out of memory|Runtime exited.*signal: killed/i.test(head)) {
    return endedWithout("failed", "function_crashed", `The function ran out of memory: its limit is ${fn.memory_mb} MB`);
  }
  if (errorType === "" && /Process exited before completing request/i.test(head)) {
    return endedWithout("failed", "function_crashed", `The function's process exited before it answered, most often because it ran out of memory: its limit is ${fn.memory_mb} MB`);
  }
  if (errorType === "Function.ResponseSizeTooLarge") {
    const { code, message } = resultTooLarge(answerBytes(errorMessage));
    return endedWithout("failed", code, message);
  }
  const what = [errorType, errorMessage].filter(Boolean).join(": ") || "Lambda reported an error without a message";
  return endedWithout("failed", "function_crashed", `The function's process crashed: ${what.slice(0, MAX_LAMBDA_MESSAGE_CHARS)}`);
}

/** How much of Lambda's error message an ending keeps (the message can quote the function's output). */
const MAX_LAMBDA_MESSAGE_CHARS = 1000;

/** The answer's size from Lambda's "Response payload size (N bytes) exceeded …", when it says. */
function answerBytes(errorMessage: string): number | undefined {
  const bytes = Number(/\((\d{1,12}) bytes\)/.exec(errorMessage)?.[1]);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

/** What bounds what a run reports about itself. */
export interface OutcomeBounds {
  /** The most browser time the run can have had: its duration as the service measured it (or its timeout). */
  maxBrowserMs: number;
  /** The function's memory limit: Lambda stops a function that goes past it. */
  memoryMb: number;
}

/**
 * The run's ending from a successful invocation: the runner's answer, parsed as untrusted
 * input with the run outcome schema (parseRunOutcome: a fixed set of statuses and error codes,
 * a result of JSON text up to 6 MB nested at most MAX_JSON_DEPTH levels (an answer nested
 * deeper, or a result: `result_too_deep`), capped logs and messages, browser_ms within
 * `maxBrowserMs`). A `function_timeout` failure (the runner stopped the run at its deadline)
 * ends the run as timed_out. The stack trace of a failure is dropped; an answer that is not an
 * outcome ends the run as crashed. The ending is built from named fields: nothing else of the
 * answer survives.
 */
export function outcomeEnding(payload: string, bounds: OutcomeBounds): Ending {
  if (jsonTextDeeperThan(payload, MAX_JSON_DEPTH)) return resultTooDeepEnding();
  let answer: unknown;
  try {
    answer = JSON.parse(payload);
  } catch {
    answer = undefined;
  }
  return outcomeEndingOf(answer, bounds, () => payload);
}

/** outcomeEnding of an answer parsed already; `shown` gives its text for the message of one that is no outcome. */
export function outcomeEndingOf(answer: unknown, bounds: OutcomeBounds, shown: () => string = () => JSON.stringify(answer) ?? ""): Ending {
  // Nested deeper than a runner's answer can be (its result is JSON text): nothing of it is read, or written out again.
  if (valueDeeperThan(answer, MAX_JSON_DEPTH)) return resultTooDeepEnding();
  const parsed = parseRunOutcome(answer, bounds.maxBrowserMs);
  if (!parsed.ok) {
    return endedWithout("failed", "function_crashed", `The function's runner gave an answer that is not a run outcome (${parsed.problem}): ${shown().slice(0, 200)}`);
  }
  const { outcome } = parsed;
  const peak_memory_mb = peakMemoryOf(answer, bounds.memoryMb);
  if (outcome.status === "succeeded") {
    return { status: "succeeded", result_json: outcome.result_json, error: null, logs: outcome.logs, browser_ms: outcome.browser_ms, peak_memory_mb };
  }
  if (outcome.error.code === "out_of_memory") {
    // The runner saw its browser killed out of memory: a crash, named for the limit, never a timeout.
    const error = { code: "function_crashed", message: `The function ran out of memory: its limit is ${bounds.memoryMb} MB (its browser was killed)` };
    return { status: "failed", result_json: null, error, logs: outcome.logs, browser_ms: outcome.browser_ms, peak_memory_mb };
  }
  const { code, message, stack } = outcome.error;
  // Only a function_error's stack is the user's code's (a timeout's is the runner's).
  const error = code === "function_error" && stack !== undefined ? { code, message, stack } : { code, message };
  // The runner stopped the run at its deadline: a timeout, as when Lambda stops it, with the logs kept.
  const status = outcome.error.code === "function_timeout" ? "timed_out" : "failed";
  return { status, result_json: null, error, logs: outcome.logs, browser_ms: outcome.browser_ms, peak_memory_mb };
}

/** The ending of an answer, or a result, nested more than MAX_JSON_DEPTH levels deep. */
export function resultTooDeepEnding(): Ending {
  const { code, message } = resultTooDeep();
  return endedWithout("failed", code, message);
}

/**
 * The runner's own measure of its container (the Node process and its browser), rounded and
 * at most the function's memory limit; null when it sent none (older runners) or not a
 * positive number.
 */
function peakMemoryOf(answer: unknown, memoryMb: number): number | null {
  const sent = typeof answer === "object" && answer !== null ? (answer as { peak_memory_mb?: unknown }).peak_memory_mb : undefined;
  if (typeof sent !== "number" || !Number.isFinite(sent) || sent <= 0) return null;
  return Math.min(Math.round(sent), memoryMb);
}
