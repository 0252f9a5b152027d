import { isStoreUnavailable } from "../store/dynamo";
import { ApiError } from "./errors";
import { json, type HttpResult } from "./response";

/** Seconds a client is asked to wait when the store cannot be reached. */
export const STORE_RETRY_AFTER_SECONDS = 2;

/**
 * The one JSON error body of the API. A store that cannot be reached (see
 * isStoreUnavailable) is a 503 `service_unavailable` with `Retry-After`; anything else that
 * is not an ApiError is an `internal_error` whose message says nothing of the cause (it is
 * logged instead).
 */
export function errorResult(error: unknown, requestId: string, log: (line: string) => void = console.error): HttpResult {
  const apiError = toApiError(error);
  if (apiError.code === "service_unavailable" && !(error instanceof ApiError)) {
    log(`[${requestId}] store unavailable: ${error instanceof Error ? error.message : String(error)}`);
  } else if (!(error instanceof ApiError)) {
    log(`[${requestId}] internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  }
  return json(
    apiError.status,
    { error: { code: apiError.code, message: apiError.message, request_id: requestId, details: apiError.details } },
    { ...apiError.headers, "x-request-id": requestId },
  );
}

function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (isStoreUnavailable(error)) {
    return new ApiError(
      "service_unavailable",
      "The service's store cannot be reached right now; try again shortly",
      {},
      { "retry-after": String(STORE_RETRY_AFTER_SECONDS) },
    );
  }
  return new ApiError("internal_error", "Internal error; the request id identifies it in the logs");
}
