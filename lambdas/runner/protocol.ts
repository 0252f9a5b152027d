/**
 * Messages between the supervising service and a local worker process (Node IPC).
 * A worker serves one function version, one invocation at a time.
 */
import type { ParameterInfo, ParameterStyle } from "../code/extractParameters";

/** What a worker needs to serve a version; the first message it receives. */
export interface WorkerInit {
  type: "init";
  /** The version's compiled CommonJS code. */
  code: string;
  /** How the code takes its parameters (CompiledCode.parameter_style). */
  parameter_style: ParameterStyle;
  /** The version's parameters in declaration order: positional calls pass them in this order. */
  variables: ParameterInfo[];
}

export interface RunRequest {
  type: "run";
  runId: string;
  /** Parameters by name, already validated and coerced against the version's variables. */
  params: Record<string, unknown>;
  /** The function's timeout; sessions never outlive it. */
  timeoutMs: number;
}

/**
 * The answer to a `browser_request`: the DevTools endpoint of the browser the supervisor
 * launched for this worker (it launches one when the first session of a run needs it, and
 * again if it went away), or why it could not.
 */
export type BrowserReply = { type: "browser"; wsEndpoint: string } | { type: "browser_failed"; message: string };

export type SupervisorMessage = WorkerInit | RunRequest | BrowserReply;

export type ErrorCode = "function_error" | "result_not_serializable" | "result_too_large";

export type RunOutcome = (
  | { status: "succeeded"; result_json: string; logs: string; browser_ms: number }
  | { status: "failed"; error: { code: ErrorCode; message: string; stack?: string }; logs: string; browser_ms: number }
) & {
  /**
   * The most memory (MB, proportional set size) the runner's process and its browser used
   * during the run, sampled: sent by the Lambda handler. A local worker sends none: the
   * service measures it from outside.
   */
  peak_memory_mb?: number;
};

export type WorkerMessage =
  | { type: "ready" }
  | { type: "browser_request" }
  | { type: "init_failed"; message: string }
  | ({ type: "done"; runId: string } & { outcome: RunOutcome });

/** Console output kept per run; the rest is cut with a note. */
export { MAX_LOG_BYTES } from "./outcomeSchema";
