import { AcceptedRun } from "../../schemas/runSchemas";
import { InvocationResult, InvokeParameters, InvokeQuery } from "../../schemas/invokeSchemas";
import type { OtherResponse, RouteSpec } from "../routeSpec";

/** The headers an invocation reads (the x-service-* ones are kept with its run). */
export const INVOKE_HEADERS = ["Idempotency-Key", "Prefer", "X-Function-Version", "x-service-request-origin", "x-service-sdk-version"] as const;

/** What names an invocation's run in its answers (success, 202, and a failed run's error). */
export const RUN_HEADERS = ["X-Run-Id", "X-Function-Version", "X-Duration-Ms", "Idempotent-Replayed"] as const;

/** The errors of an invocation: before the run (the function, version, parameters, limits), and the run's own. */
const INVOKE_ERRORS = [
  "invalid_parameters",
  "function_not_found",
  "version_not_found",
  "function_not_ready",
  "idempotency_key_reused",
  "concurrency_limit_exceeded",
  "invocation_quota_exceeded",
  "queue_full",
  "function_error",
  "result_not_serializable",
  "result_too_large",
  "result_too_deep",
  "profile_too_large",
  "insufficient_memory",
  "function_crashed",
  "function_timeout",
  "run_canceled",
] as const;

/** The answers of an invocation besides 200 and its errors. */
export const INVOKE_ACCEPTED: OtherResponse = {
  status: 202,
  description: "The run goes on (it outlasted the sync window, or Prefer: respond-async): its result is at status_url (Location) later",
  response: AcceptedRun,
  headers: ["Location", "X-Run-Id", "X-Function-Version", "Idempotent-Replayed"],
};

const INVOKE_SPEC = {
  tag: "invocations",
  auth: true,
  status: 200,
  response: InvocationResult,
  responseHeaders: RUN_HEADERS,
  otherResponses: [INVOKE_ACCEPTED],
  headers: INVOKE_HEADERS,
  errors: INVOKE_ERRORS,
  // A run that ended badly is answered with its error, and names the run as a success would.
  errorHeaders: { 429: RUN_HEADERS, 500: RUN_HEADERS, 504: RUN_HEADERS },
} as const;

/** Invocations: POST with a JSON body, GET with query parameters. */
export const INVOCATION_ROUTES = [
  {
    operationId: "invokePost",
    method: "POST",
    path: "/functions/{ref}",
    summary: "Invoke a function with a JSON object of parameters; 200 with its result, or 202 when it outlasts the sync window",
    body: InvokeParameters,
    ...INVOKE_SPEC,
  },
  {
    operationId: "invokeGet",
    method: "GET",
    path: "/functions/{ref}",
    summary: "Invoke a function with query parameters, coerced to the declared types",
    query: InvokeQuery,
    ...INVOKE_SPEC,
  },
] as const satisfies readonly RouteSpec[];
