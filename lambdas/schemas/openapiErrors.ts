import { ERROR_STATUS, type ErrorCode } from "../http/errors";
import type { RouteSpec } from "../routes/routeSpecs";

/** The errors every route with a token can answer: no or a refused token, the rate limit, a store or key set out of reach. */
const TOKEN_ERRORS: readonly ErrorCode[] = ["missing_token", "invalid_token", "rate_limited", "service_unavailable"];
/** The errors of a route that reads a JSON body: not JSON or not of its schema, too large. */
const BODY_ERRORS: readonly ErrorCode[] = ["invalid_request", "payload_too_large"];
/** The error of a route that reads query parameters: one not of its schema. */
const QUERY_ERRORS: readonly ErrorCode[] = ["invalid_request"];

/** Every error code a route can answer with: its own (RouteSpec.errors) and those of its kind. */
export function errorCodesOf(route: RouteSpec): ErrorCode[] {
  const codes = new Set<ErrorCode>(route.errors ?? []);
  const add = (more: readonly ErrorCode[]) => more.forEach((code) => codes.add(code));
  if (route.auth) add(TOKEN_ERRORS);
  if (route.body) add(BODY_ERRORS);
  if (route.query) add(QUERY_ERRORS);
  codes.add("internal_error");
  return [...codes];
}

/** A route's error codes by HTTP status (ERROR_STATUS), in status order. */
export function errorsByStatus(route: RouteSpec): Map<number, ErrorCode[]> {
  const byStatus = new Map<number, ErrorCode[]>();
  const codes = errorCodesOf(route).sort((a, b) => ERROR_STATUS[a] - ERROR_STATUS[b]);
  for (const code of codes) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  return byStatus;
}
