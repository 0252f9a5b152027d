import { ApiError } from "../../lambdas/http/errors";
import { createError } from "../../client";

/**
 * A check the CLI runs with the service's own code (compileCode, validateParams) fails with the
 * service's ApiError: turned into the client's error class for its code, so that it is reported
 * (exit 3, `[invalid_code, HTTP 400]`) exactly as the API would report it.
 */
export function asClientError(error: unknown): unknown {
  if (!(error instanceof ApiError)) return error;
  return createError({ status: error.status, code: error.code, message: error.message, details: error.details });
}
