import type { z } from "zod";
import { ApiError, ERROR_STATUS } from "../http/errors";
import { type HttpResult, json } from "../http/response";
import { runErrorStack } from "../runs/toRunView";
import { runWithinDepth } from "../runs/resultDepth";
import type { RunItem } from "../runs/types";
import type { AcceptedRun } from "../schemas/runSchemas";

/** The answer to an invocation whose run has ended: its result, or its error. */
export function finishedResponse(stored: RunItem): HttpResult {
  const run = runWithinDepth(stored);
  const headers = {
    "x-run-id": run.run_id,
    "x-function-version": String(run.version),
    "x-duration-ms": String(run.duration_ms ?? 0),
  };
  if (run.status === "succeeded") {
    return { statusCode: 200, headers: { "content-type": "application/json; charset=utf-8", ...headers }, body: run.result_json ?? "null" };
  }
  const error = run.error ?? { code: "internal_error", message: "The run failed" };
  const code = error.code === "function_timeout" ? "function_timeout" : knownCode(error.code);
  const retry: Record<string, string> = ERROR_STATUS[code] === 429 ? { "retry-after": "1" } : {};
  // The stack of the user's code (a function_error's), its frames on the lines of the user's source.
  const stack = runErrorStack(error);
  const details = stack === undefined ? { run_id: run.run_id, status: run.status } : { run_id: run.run_id, status: run.status, stack };
  throw new ApiError(code, error.message, details, { ...headers, ...retry });
}

/** 202: the run goes on; its result is at the status URL later. */
export function acceptedResponse(run: RunItem, baseUrl: string): HttpResult {
  const statusUrl = `${baseUrl}/runs/${run.run_id}`;
  const body: z.infer<typeof AcceptedRun> = { run_id: run.run_id, status: run.status === "queued" ? "queued" : "running", status_url: statusUrl };
  return json(202, body, { location: statusUrl, "x-run-id": run.run_id, "x-function-version": String(run.version) });
}

function knownCode(code: string) {
  switch (code) {
    case "function_error":
    case "result_not_serializable":
    case "result_too_large":
    case "result_too_deep":
    case "profile_too_large":
    case "insufficient_memory":
    case "function_crashed":
    case "concurrency_limit_exceeded":
    case "invocation_quota_exceeded":
    case "run_canceled":
      return code;
    default:
      return "internal_error" as const;
  }
}
