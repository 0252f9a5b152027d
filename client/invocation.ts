import { FunctionError, FunctionTimeoutError, WaitTimeoutError, createError } from "./errors";
import type { Send } from "./transport";
import { FINAL_STATUSES } from "../lambdas/runs/types";
import type { AcceptedRun, Run } from "./types";

/** Run statuses after which a run changes no more (the server's own list). */
export { FINAL_STATUSES };

/** How long to wait for a run, and how often to look. */
export interface WaitOptions {
  /** Give up (WaitTimeoutError) after this long. Default 16 minutes: longer than any function's timeout. */
  timeoutMs?: number;
  /** The longest pause between two `GET /runs/{id}`; polls start at 250 ms and grow to it. Default 2000 ms. */
  pollIntervalMs?: number;
  /** Called with the run after each poll that found it still going. */
  onPoll?: (run: Run) => void;
}

/** How an invocation is sent and waited for. */
export interface InvokeOptions extends WaitOptions {
  /** Run this version instead of the latest (`X-Function-Version`). */
  version?: string | number;
  /**
   * `POST` (default) sends the parameters as a JSON object. `GET` sends them in the query string,
   * where the service converts each string to the parameter's declared type.
   */
  method?: "POST" | "GET";
  /** Called once when the service answered 202 and the client starts polling. */
  onAccepted?: (accepted: AcceptedRun) => void;
  /**
   * The invocation's `Idempotency-Key` (default: a new random one per call). Sent on every
   * attempt, so a retry after a lost answer, a 5xx or a 429 starts no second run.
   */
  idempotencyKey?: string;
}

/** A finished, successful invocation. */
export interface InvocationResult<T = unknown> {
  /** The automation's return value. */
  result: T;
  runId: string;
  /** The version that ran. */
  version: string | null;
  durationMs: number | null;
}

/** How long invoke and waitForRun wait for a run by default: 16 minutes, longer than any function's timeout (900 s). */
export const DEFAULT_WAIT_MS = 16 * 60 * 1000;

/** Polls `GET /runs/{runId}` until the run's status is final, and returns the run (succeeded or not). */
export async function waitForRun(send: Send, runId: string, options: WaitOptions = {}): Promise<Run> {
  const deadline = Date.now() + (options.timeoutMs ?? DEFAULT_WAIT_MS);
  const maxPause = options.pollIntervalMs ?? 2000;
  let pause = Math.min(250, maxPause);
  for (;;) {
    const run = (await send({ method: "GET", path: `/runs/${encodeURIComponent(runId)}`, idempotent: true })).body as Run;
    if (FINAL_STATUSES.includes(run.status)) return run;
    options.onPoll?.(run);
    const left = deadline - Date.now();
    if (left <= 0) {
      throw new WaitTimeoutError({
        status: 0,
        code: "wait_timeout",
        message: `Run ${runId} is still ${run.status}; stopped waiting (it goes on; GET /runs/${runId} has its result later)`,
        details: { run_id: runId, status: run.status },
        runId,
      });
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(pause, left)));
    pause = Math.min(pause * 2, maxPause);
  }
}

/** The result of a finished run, or its failure as the error an invocation answers with. */
export function runOutcome<T>(run: Run): InvocationResult<T> {
  if (run.status === "succeeded") {
    return { result: run.result as T, runId: run.run_id, version: run.version, durationMs: run.duration_ms };
  }
  const code = run.error?.code ?? (run.status === "timed_out" ? "function_timeout" : "function_error");
  const init = {
    status: code === "function_timeout" ? 504 : 500,
    code,
    message: run.error?.message ?? `The run ${run.status}`,
    details: { run_id: run.run_id, status: run.status },
  };
  if (code === "function_timeout") throw new FunctionTimeoutError(init);
  const error = createError(init);
  throw error instanceof FunctionError ? error : new FunctionError(init);
}

/**
 * Invokes a function and waits for its result through 202s: an answer of 200 is the result; a
 * 202 (the run outlasted the service's sync window) is polled until the run ends. Retried like
 * an idempotent call (a lost answer, a 5xx, a 429), always with the same `Idempotency-Key`: the
 * service starts one run for all attempts and replays its answer.
 */
export async function invoke<T>(
  send: Send,
  name: string,
  params: Record<string, unknown> | undefined,
  options: InvokeOptions = {},
): Promise<InvocationResult<T>> {
  const headers: Record<string, string> = { "idempotency-key": options.idempotencyKey ?? globalThis.crypto.randomUUID() };
  if (options.version !== undefined) headers["x-function-version"] = String(options.version);
  const path = `/functions/${encodeURIComponent(name)}`;
  const response =
    options.method === "GET"
      ? await send({ method: "GET", path, query: stringParams(params), headers, idempotent: true })
      : await send({ method: "POST", path, body: params, headers, idempotent: true });
  if (response.status === 202) {
    const accepted = response.body as AcceptedRun;
    options.onAccepted?.(accepted);
    return runOutcome<T>(await waitForRun(send, accepted.run_id, options));
  }
  const duration = response.headers.get("x-duration-ms");
  return {
    result: response.body as T,
    runId: response.headers.get("x-run-id") ?? "",
    version: response.headers.get("x-function-version"),
    durationMs: duration === null ? null : Number(duration),
  };
}

/** Parameters as query-string values: strings as they are, anything else as JSON text. */
export function stringParams(params: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(params ?? {})) {
    out[name] = typeof value === "string" ? value : JSON.stringify(value);
  }
  return out;
}
