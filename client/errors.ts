/**
 * Errors of the browserfn client: one class per family of API error codes, all subclasses of
 * BrowserfnError, so callers can `catch (e) { if (e instanceof NotFoundError) … }` or switch on
 * `e.code`. Constructors have no side effects.
 */

/** What every error carries: the HTTP status, the API's stable `code`, and the error body's fields. */
export interface ErrorInit {
  status: number;
  code: string;
  message: string;
  requestId?: string | null;
  details?: Record<string, unknown>;
  /** The answer's `Retry-After`, in seconds. */
  retryAfter?: number | null;
}

/** Base class of every error the client throws. `status` is 0 when no HTTP answer came. */
export class BrowserfnError extends Error {
  /** HTTP status of the answer (0: no answer, e.g. the connection failed or the wait timed out). */
  readonly status: number;
  /** The API's stable error code, e.g. `function_not_found`. */
  readonly code: string;
  /** The `request_id` of the failed request, when the service answered. */
  readonly requestId: string | null;
  /** The error body's `details`. */
  readonly details: Record<string, unknown>;
  /** Seconds to wait before trying again (the answer's `Retry-After`: every 429, some 5xx), when given. */
  readonly retryAfter: number | null;

  constructor(init: ErrorInit) {
    super(init.message);
    this.name = new.target.name;
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId ?? null;
    this.details = init.details ?? {};
    this.retryAfter = init.retryAfter ?? null;
  }
}

/** 400: a bad request body, name, code, schedule, time zone, parameters or limit. */
export class ValidationError extends BrowserfnError {}

/** 401: no token, or a token the service does not accept. */
export class AuthenticationError extends BrowserfnError {}

/** 403: the key may not do this (e.g. admin-only operations). */
export class ForbiddenError extends BrowserfnError {}

/** 404: no such function, run, version, key, account or route. */
export class NotFoundError extends BrowserfnError {}

/** 405 and 409: the name is taken, the function is not ready, a concurrent update, a wrong method. */
export class ConflictError extends BrowserfnError {}

/** 413: the request body is too large. */
export class PayloadTooLargeError extends BrowserfnError {}

/** 429: a rate limit, the plan's concurrency or its monthly quota. `retryAfter` is in seconds. */
export class RateLimitError extends BrowserfnError {}

/**
 * The automation ran and failed: it threw (`function_error`), returned something that is not
 * JSON (`result_not_serializable`), more than 6 MB of it (`result_too_large`) or JSON nested
 * more than 64 levels deep (`result_too_deep`), its process
 * died (`function_crashed`) or it ran out of
 * time (`function_timeout`, as FunctionTimeoutError). `runId` names the run.
 */
export class FunctionError extends BrowserfnError {
  /** The failed run, when known (`GET /runs/{runId}` has its logs). */
  readonly runId: string | null;

  constructor(init: ErrorInit) {
    super(init);
    const runId = init.details?.run_id;
    this.runId = typeof runId === "string" ? runId : null;
  }
}

/** 504 `function_timeout`: the run did not finish within the function's timeout. */
export class FunctionTimeoutError extends FunctionError {}

/** 5xx other than a function's failure: `internal_error`, `service_unavailable`, an unexpected answer. */
export class ServerError extends BrowserfnError {}

/** No answer: the connection failed (`code: "network_error"`). */
export class NetworkError extends BrowserfnError {}

/** The client stopped waiting for a run (`code: "wait_timeout"`); the run may still finish. `runId` names it. */
export class WaitTimeoutError extends BrowserfnError {
  /** The run that was still going. */
  readonly runId: string;

  constructor(init: ErrorInit & { runId: string }) {
    super(init);
    this.runId = init.runId;
  }
}

const FUNCTION_FAILURES = new Set(["function_error", "result_not_serializable", "result_too_large", "result_too_deep", "insufficient_memory", "function_crashed"]);

/** The error class for an API error `code` (and its HTTP `status` when the code is unknown). */
export function errorClassFor(status: number, code: string): new (init: ErrorInit) => BrowserfnError {
  if (code === "function_timeout") return FunctionTimeoutError;
  if (FUNCTION_FAILURES.has(code)) return FunctionError;
  if (status === 400) return ValidationError;
  if (status === 401) return AuthenticationError;
  if (status === 403) return ForbiddenError;
  if (status === 404) return NotFoundError;
  if (status === 405 || status === 409) return ConflictError;
  if (status === 413) return PayloadTooLargeError;
  if (status === 429) return RateLimitError;
  if (status >= 500) return ServerError;
  return BrowserfnError;
}

/** Builds the error for `init`, of the class its code calls for. */
export function createError(init: ErrorInit): BrowserfnError {
  const ErrorClass = errorClassFor(init.status, init.code);
  return new ErrorClass(init);
}

/** `Retry-After` in seconds: a number of seconds, or an HTTP date (null when absent or unreadable). */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === "") return null;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, (at - now) / 1000);
}

/** The error for a non-2xx answer: the API's error body when there is one, else a generic error by status. */
export function errorFromResponse(status: number, headers: Headers, text: string): BrowserfnError {
  const retryAfter = parseRetryAfter(headers.get("retry-after"));
  const requestId = headers.get("x-request-id");
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  const error = (body as { error?: { code?: unknown; message?: unknown; request_id?: unknown; details?: unknown } } | undefined)?.error;
  if (error && typeof error.code === "string" && typeof error.message === "string") {
    const details = typeof error.details === "object" && error.details !== null ? (error.details as Record<string, unknown>) : {};
    const id = typeof error.request_id === "string" ? error.request_id : requestId;
    return createError({ status, code: error.code, message: error.message, requestId: id, details, retryAfter });
  }
  const snippet = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  return createError({
    status,
    code: status >= 500 ? "internal_error" : "unexpected_response",
    message: `HTTP ${status} without an API error body${snippet ? `: ${snippet}` : ""}`,
    requestId,
    retryAfter,
  });
}
