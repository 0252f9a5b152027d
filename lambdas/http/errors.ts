import { redactDeep, redactSecrets } from "./redactSecrets";

/** Every error code the API can answer with, and the HTTP status it carries. */
export const ERROR_STATUS = {
  invalid_request: 400,
  invalid_name: 400,
  invalid_code: 400,
  invalid_schedule: 400,
  invalid_timezone: 400,
  invalid_parameters: 400,
  invalid_limit: 400,
  batch_empty: 400,
  batch_too_large: 400,
  invalid_cursor: 400,
  missing_token: 401,
  invalid_token: 401,
  forbidden: 403,
  function_not_found: 404,
  run_not_found: 404,
  batch_not_found: 404,
  artifact_not_found: 404,
  secret_not_found: 404,
  profile_not_found: 404,
  version_not_found: 404,
  key_not_found: 404,
  account_not_found: 404,
  route_not_found: 404,
  method_not_allowed: 405,
  function_exists: 409,
  idempotency_key_reused: 422,
  function_not_ready: 409,
  update_conflict: 409,
  run_finished: 409,
  run_canceled: 409,
  request_timeout: 408,
  payload_too_large: 413,
  headers_too_large: 431,
  concurrency_limit_exceeded: 429,
  invocation_quota_exceeded: 429,
  queue_full: 429,
  rate_limited: 429,
  too_many_streams: 429,
  too_many_connections: 429,
  function_error: 500,
  result_not_serializable: 500,
  result_too_large: 500,
  result_too_deep: 500,
  profile_too_large: 500,
  insufficient_memory: 500,
  function_crashed: 500,
  internal_error: 500,
  service_unavailable: 503,
  function_timeout: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/**
 * A failure with a stable code; turned into the one JSON error body in one place (the error
 * middleware). Message and details never carry a bearer secret: an API key or JWT the request
 * put where it does not belong (a path, a parameter) is `[redacted]` in them.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly details: Record<string, unknown>;

  constructor(
    readonly code: ErrorCode,
    message: string,
    details: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(redactSecrets(message));
    this.name = "ApiError";
    this.status = ERROR_STATUS[code];
    this.details = redactDeep(details);
  }
}
