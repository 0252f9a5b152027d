import type { LambdaRunEvent } from "../../runner/lambdaPackage";
import { endedWithout, type Ending, type FunctionLimits, functionErrorEnding, outcomeEnding } from "./invokeOutcome";

/**
 * What Lambda sends a function's async-invocation destination (the run-completion Lambda) when
 * an Event invocation ends: the event it was invoked with, and its answer or why there is none.
 */
export interface DestinationEvent {
  version?: string;
  timestamp?: string;
  requestContext?: {
    requestId?: string;
    /** The invoked function, with the qualifier it was invoked with. */
    functionArn?: string;
    /** `Success`, `RetriesExhausted` (the function failed) or `EventAgeExceeded` (never ran). */
    condition?: string;
    approximateInvokeCount?: number;
  };
  requestPayload?: unknown;
  responseContext?: { statusCode?: number; executedVersion?: string; functionError?: string };
  /** The runner's RunOutcome, or Lambda's `{ errorType, errorMessage }` when functionError is set. */
  responsePayload?: unknown;
}

/** The run event the destination event carries, when it is one. */
export function runEventOf(event: DestinationEvent): LambdaRunEvent | null {
  const payload = event.requestPayload as Partial<LambdaRunEvent> | null | undefined;
  if (typeof payload !== "object" || payload === null || typeof payload.run_id !== "string") return null;
  return {
    run_id: payload.run_id,
    params: payload.params ?? {},
    timeout_ms: typeof payload.timeout_ms === "number" ? payload.timeout_ms : 0,
    completion_token: typeof payload.completion_token === "string" ? payload.completion_token : "",
  };
}

/** The function name of a Lambda ARN (`arn:aws:lambda:region:account:function:name[:qualifier]`). */
export function functionNameOf(functionArn: string): string {
  return functionArn.split(":")[6] ?? "";
}

/**
 * The run's ending from a destination event, with the mapping of a synchronous Invoke's
 * answer (invokeOutcome.ts): a function error (timeout, out of memory, crash) by its
 * errorType/errorMessage, a success by the runner's RunOutcome, parsed as untrusted input
 * (outcomeEnding). `measuredMs` is the run's duration as the service measured it: the bound of
 * the browser time the run may report (without one, the function's timeout). An event Lambda
 * dropped before running it (`EventAgeExceeded`: the function's concurrency stayed exhausted)
 * ends the run as `concurrency_limit_exceeded`, like a refused synchronous Invoke.
 */
export function completionEnding(event: DestinationEvent, fn: FunctionLimits, measuredMs?: number): Ending {
  const condition = event.requestContext?.condition ?? "unknown";
  const payload = event.responsePayload;
  const text = typeof payload === "string" ? payload : JSON.stringify(payload ?? null);
  if (event.responseContext?.functionError) return functionErrorEnding(text, fn);
  if (condition === "Success") return outcomeEnding(text, { maxBrowserMs: measuredMs ?? fn.timeout_seconds * 1000, memoryMb: fn.memory_mb });
  if (condition === "EventAgeExceeded") {
    const message = "Lambda could not start the run before its event expired: the function's concurrency stayed exhausted";
    return endedWithout("failed", "concurrency_limit_exceeded", message);
  }
  return endedWithout("failed", "function_crashed", `Lambda gave up on the run without an answer (${condition})`);
}
