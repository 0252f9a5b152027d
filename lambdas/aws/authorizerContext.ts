import { ApiError, ERROR_STATUS, type ErrorCode } from "../http/errors";
import type { Principal } from "../identity/identity";

/**
 * What the Lambda authorizer hands the route handlers (`requestContext.authorizer.lambda`).
 * The authorizer allows whenever it reaches a verdict: either the caller's principal, or the
 * error to answer with, so that the handler answers it in the API's one JSON error shape (API
 * Gateway's own 401/403 bodies are `{"message":"Unauthorized"}`, not ours).
 *
 * API Gateway caches this context per `Authorization` header value and hands it to later
 * requests with the same header: it holds facts about the token only (who it is, or why it is
 * refused), never anything about the request that produced it.
 */
export type AuthorizerContext =
  | { account_id: string; plan: string; admin: boolean; key_id: string }
  | { error_code: string; error_message: string; error_retry_after?: string };

/** The principal as context values (strings and booleans only; `key_id` "" for a token). */
export function principalContext(principal: Principal): AuthorizerContext {
  return { account_id: principal.account_id, plan: principal.plan, admin: principal.admin, key_id: principal.key_id ?? "" };
}

/** A failed authentication as context values; anything but an ApiError is an internal error. */
export function errorContext(error: unknown): AuthorizerContext {
  if (!(error instanceof ApiError)) {
    return { error_code: "internal_error", error_message: "Internal error while checking the token; the request id identifies it in the logs" };
  }
  const retryAfter = error.headers["retry-after"];
  return { error_code: error.code, error_message: error.message, ...(retryAfter ? { error_retry_after: retryAfter } : {}) };
}

/**
 * The principal the authorizer resolved, or throws the error it found. Values are checked,
 * not trusted blindly: a context that is neither shape is an internal error.
 */
export function principalFromContext(context: Record<string, unknown>): Principal {
  if (typeof context.error_code === "string") {
    const code: ErrorCode = context.error_code in ERROR_STATUS ? (context.error_code as ErrorCode) : "internal_error";
    const message = typeof context.error_message === "string" ? context.error_message : "Authentication failed";
    const headers: Record<string, string> = typeof context.error_retry_after === "string" ? { "retry-after": context.error_retry_after } : {};
    throw new ApiError(code, message, {}, headers);
  }
  const { account_id, plan, admin, key_id } = context;
  if (typeof account_id !== "string" || account_id === "" || typeof plan !== "string") {
    throw new Error("The authorizer context names no account");
  }
  return {
    account_id,
    plan,
    admin: admin === true || admin === "true",
    key_id: typeof key_id === "string" && key_id !== "" ? key_id : null,
  };
}
