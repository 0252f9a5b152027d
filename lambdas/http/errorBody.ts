import { ApiError } from "./errors";
import { json, type HttpResult } from "./response";

/**
 * The one JSON error body of the API. Anything that is not an ApiError is an
 * `internal_error` whose message says nothing of the cause (it is logged instead).
 */
export function errorResult(error: unknown, requestId: string, log: (line: string) => void = console.error): HttpResult {
  const apiError =
    error instanceof ApiError ? error : new ApiError("internal_error", "Internal error; the request id identifies it in the logs");
  if (!(error instanceof ApiError)) {
    log(`[${requestId}] internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  }
  return json(
    apiError.status,
    { error: { code: apiError.code, message: apiError.message, request_id: requestId, details: apiError.details } },
    { ...apiError.headers, "x-request-id": requestId },
  );
}
