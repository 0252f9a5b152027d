import type { z } from "zod";
import type { ErrorCode } from "../http/errors";
import {
  CreateFunctionBody,
  ForkFunctionBody,
  FunctionList,
  FunctionOpenapiDocument,
  FunctionRecord,
  UpdateFunctionBody,
  VersionCode,
  VersionList,
} from "../schemas/functionSchemas";
import { DASHBOARD_FILES } from "../dashboard/dashboardAssets";
import { ArtifactBytes, ArtifactList } from "../schemas/artifactSchemas";
import { PutSecretBody, SecretList } from "../schemas/secretSchemas";
import { RunEventStream, RunEventsQuery } from "../schemas/runEventSchemas";
import { ApiKeyList, CreateApiKeyBody, CreatedApiKey, SetPlanBody } from "../schemas/keySchemas";
import { AccountPlan, FunctionMetrics, UsageReport } from "../schemas/usageSchemas";
import { DeliveryList, WebhookSecretAnswer } from "../schemas/webhookSchemas";
import { JsonRpcMessage, ProtectedResourceMetadata } from "../schemas/mcpSchemas";
import { DeliveriesQuery, ListFunctionsQuery, LogsQuery, UsageQuery } from "../schemas/querySchemas";
import { AcceptedRun, LogList, RunView } from "../schemas/runSchemas";
import { InvocationResult, InvokeParameters, InvokeQuery } from "../schemas/invokeSchemas";
import { Health, OpenApiDocument } from "../schemas/metaSchemas";
import { ArtifactNameParam, FunctionIdParam, SecretNameParam } from "../schemas/pathSchemas";
import type { RequestHeaderName, ResponseHeaderName } from "../schemas/headerSchemas";

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** The part of the API a route belongs to (its OpenAPI tag). */
export type ApiTag = "functions" | "invocations" | "runs" | "secrets" | "webhooks" | "usage" | "keys" | "mcp" | "meta";

/** An answer of a route besides its success and its errors (a 202, a 204, a redirect…). */
export interface OtherResponse {
  status: number;
  description: string;
  response?: z.ZodType;
  /** The body's content type when it is not JSON. */
  contentType?: string;
  headers?: readonly ResponseHeaderName[];
}

/** What a route is, without its handler: read by the OpenAPI document, the local server and the CDK stack. */
export interface RouteSpec {
  operationId: string;
  method: HttpMethod;
  /** API Gateway path template, e.g. `/functions/{ref}/info`. */
  path: string;
  summary: string;
  tag: ApiTag;
  auth: boolean;
  status: number;
  body?: z.ZodType;
  query?: z.ZodType;
  response?: z.ZodType;
  /** Headers of the success answer besides X-Request-Id (which every answer has). */
  responseHeaders?: readonly ResponseHeaderName[];
  /** Answers besides the success and the errors. */
  otherResponses?: readonly OtherResponse[];
  /**
   * The error codes of this route itself. Those every route of its kind can answer are added
   * by the OpenAPI document (openapiErrors.ts): 401/429/503 with a token, 400/413 with a body,
   * 400 with a query, 500 always. Their statuses come from ERROR_STATUS.
   */
  errors?: readonly ErrorCode[];
  /** Headers that error answers of a status carry (an invocation's 500 names its run). */
  errorHeaders?: Readonly<Partial<Record<number, readonly ResponseHeaderName[]>>>;
  /** Schemas of path parameters whose name means something else here than in PATH_PARAMETERS. */
  params?: Readonly<Record<string, z.ZodType>>;
  /** False leaves the route out of the OpenAPI document (the dashboard's page and files are not API). */
  openapi?: false;
  /** Files the handler reads at run time, relative to the project root; bundled beside its Lambda's code. */
  files?: readonly string[];
  /** Request headers the route reads (schemas in REQUEST_HEADERS). */
  headers?: readonly RequestHeaderName[];
  /** The success body's content type when it is not JSON (e.g. `text/event-stream`). */
  contentType?: string;
  /**
   * False: on AWS the route is not behind the HTTP API's authorizer and the handler checks the
   * token itself (with the same Identity), so that its 401 carries the route's own headers: API
   * Gateway answers a request without a token on an authorized route itself (`/mcp` must send
   * `WWW-Authenticate`). Only with `auth: true`.
   */
  gatewayAuthorizer?: false;
}

/** The headers an invocation reads. */
const INVOKE_HEADERS = ["Idempotency-Key", "Prefer", "X-Function-Version"] as const;

/** What names an invocation's run in its answers (success, 202, and a failed run's error). */
const RUN_HEADERS = ["X-Run-Id", "X-Function-Version", "X-Duration-Ms", "Idempotent-Replayed"] as const;

/** The errors of an invocation: before the run (the function, version, parameters, limits), and the run's own. */
const INVOKE_ERRORS = [
  "invalid_parameters",
  "function_not_found",
  "version_not_found",
  "function_not_ready",
  "idempotency_key_reused",
  "concurrency_limit_exceeded",
  "invocation_quota_exceeded",
  "function_error",
  "result_not_serializable",
  "result_too_large",
  "function_crashed",
  "function_timeout",
] as const;

/** The answers of an invocation besides 200 and its errors. */
const INVOKE_ACCEPTED: OtherResponse = {
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

export const ROUTE_SPECS = [
  { operationId: "health", method: "GET", path: "/health", summary: "Liveness", tag: "meta", auth: false, status: 200, response: Health },
  {
    operationId: "openapi",
    method: "GET",
    path: "/openapi.json",
    summary: "This OpenAPI 3.1 document",
    tag: "meta",
    auth: false,
    status: 200,
    response: OpenApiDocument,
  },
  { operationId: "dashboard", method: "GET", path: "/", summary: "The web dashboard (HTML)", tag: "meta", auth: false, status: 200, openapi: false, files: DASHBOARD_FILES },
  {
    operationId: "dashboardAsset",
    method: "GET",
    path: "/dashboard/{file}",
    summary: "One of the web dashboard's scripts, its stylesheet or its icon",
    tag: "meta",
    auth: false,
    status: 200,
    openapi: false,
    files: DASHBOARD_FILES,
  },
  {
    operationId: "createFunction",
    method: "POST",
    path: "/functions",
    summary: "Deploy a new function",
    tag: "functions",
    auth: true,
    status: 201,
    body: CreateFunctionBody,
    response: FunctionRecord,
    responseHeaders: ["Location"],
    errors: ["invalid_name", "invalid_code", "invalid_schedule", "invalid_timezone", "function_exists"],
  },
  {
    operationId: "listFunctions",
    method: "GET",
    path: "/functions",
    summary: "List the account's functions in name order",
    tag: "functions",
    auth: true,
    status: 200,
    query: ListFunctionsQuery,
    response: FunctionList,
    errors: ["invalid_limit"],
  },
  {
    operationId: "getFunctionInfo",
    method: "GET",
    path: "/functions/{ref}/info",
    summary: "One function record (by name, or by function_id for shared functions)",
    tag: "functions",
    auth: true,
    status: 200,
    response: FunctionRecord,
    errors: ["function_not_found"],
  },
  {
    operationId: "getFunctionOpenapi",
    method: "GET",
    path: "/functions/{ref}/openapi.json",
    summary: "A one-operation OpenAPI 3.1 document for invoking the function (its input schema as the request body), to import as a tool; visible like /info",
    tag: "functions",
    auth: true,
    status: 200,
    response: FunctionOpenapiDocument,
    errors: ["function_not_found"],
  },
  {
    operationId: "updateFunction",
    method: "PATCH",
    path: "/functions/{ref}",
    summary: "Update a function; new code adds a version",
    tag: "functions",
    auth: true,
    status: 200,
    body: UpdateFunctionBody,
    response: FunctionRecord,
    errors: ["function_not_found", "invalid_code", "invalid_schedule", "invalid_timezone", "update_conflict"],
    errorHeaders: { 409: ["Retry-After"] },
  },
  {
    operationId: "deleteFunction",
    method: "DELETE",
    path: "/functions/{ref}",
    summary: "Delete a function, its schedule, versions and runtime",
    tag: "functions",
    auth: true,
    status: 204,
    errors: ["function_not_found"],
  },
  {
    operationId: "listVersions",
    method: "GET",
    path: "/functions/{ref}/versions",
    summary: "Every version of a function, oldest first",
    tag: "functions",
    auth: true,
    status: 200,
    response: VersionList,
    errors: ["function_not_found"],
  },
  {
    operationId: "getVersion",
    method: "GET",
    path: "/functions/{ref}/versions/{version}",
    summary: "One version with its source code",
    tag: "functions",
    auth: true,
    status: 200,
    response: VersionCode,
    errors: ["function_not_found", "version_not_found"],
  },
  {
    operationId: "forkFunction",
    method: "POST",
    path: "/functions/{ref}/fork",
    summary: "Copy a shared function's latest version into the caller's account",
    tag: "functions",
    auth: true,
    status: 201,
    body: ForkFunctionBody,
    response: FunctionRecord,
    responseHeaders: ["Location"],
    params: { ref: FunctionIdParam },
    errors: ["function_not_found", "invalid_name", "function_exists"],
  },
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
  {
    operationId: "getRun",
    method: "GET",
    path: "/runs/{run_id}",
    summary: "One run: status, parameters, result or error, timings",
    tag: "runs",
    auth: true,
    status: 200,
    response: RunView,
    errors: ["run_not_found"],
  },
  {
    operationId: "listArtifacts",
    method: "GET",
    path: "/runs/{run_id}/artifacts",
    summary: "The files the run kept (artifacts.save, failure screenshots and HTML, downloads)",
    tag: "runs",
    auth: true,
    status: 200,
    response: ArtifactList,
    errors: ["run_not_found"],
  },
  {
    operationId: "getArtifact",
    method: "GET",
    path: "/runs/{run_id}/artifacts/{name}",
    summary: "One artifact's bytes, with its content type (on AWS: 302 to a short-lived download URL)",
    tag: "runs",
    auth: true,
    status: 200,
    response: ArtifactBytes,
    contentType: "*/*",
    responseHeaders: ["Content-Disposition"],
    otherResponses: [{ status: 302, description: "On AWS: the artifact is at Location, a short-lived download URL (fetch it without the API's token)", headers: ["Location"] }],
    params: { name: ArtifactNameParam },
    errors: ["run_not_found", "artifact_not_found"],
  },
  {
    operationId: "getRunEvents",
    method: "GET",
    path: "/runs/{run_id}/events",
    summary: "The run as it happens: server-sent events (status, log, then result or error); Last-Event-ID resumes; on AWS, long polling",
    tag: "runs",
    auth: true,
    status: 200,
    query: RunEventsQuery,
    response: RunEventStream,
    contentType: "text/event-stream",
    headers: ["Last-Event-ID"],
    otherResponses: [{ status: 204, description: "Resumed after the run's end (result or error) was delivered: nothing more will come" }],
    errors: ["run_not_found", "too_many_streams"],
  },
  {
    operationId: "getLogs",
    method: "GET",
    path: "/functions/{ref}/logs",
    summary: "The function's latest runs, newest first (limit 1..1000, default 50)",
    tag: "runs",
    auth: true,
    status: 200,
    query: LogsQuery,
    response: LogList,
    errors: ["function_not_found", "invalid_limit"],
  },
  {
    operationId: "putSecret",
    method: "PUT",
    path: "/functions/{ref}/secrets/{name}",
    summary: "Set one of the function's secrets (its runs read it with secrets.get; the value is never returned and is redacted as [secret])",
    tag: "secrets",
    auth: true,
    status: 204,
    body: PutSecretBody,
    params: { name: SecretNameParam },
    errors: ["function_not_found", "invalid_name"],
  },
  {
    operationId: "listSecrets",
    method: "GET",
    path: "/functions/{ref}/secrets",
    summary: "The names of the function's secrets and when each was set (never their values)",
    tag: "secrets",
    auth: true,
    status: 200,
    response: SecretList,
    errors: ["function_not_found"],
  },
  {
    operationId: "deleteSecret",
    method: "DELETE",
    path: "/functions/{ref}/secrets/{name}",
    summary: "Remove one of the function's secrets",
    tag: "secrets",
    auth: true,
    status: 204,
    params: { name: SecretNameParam },
    errors: ["function_not_found", "invalid_name", "secret_not_found"],
  },
  {
    operationId: "getMetrics",
    method: "GET",
    path: "/functions/{ref}/metrics",
    summary: "Call counts, success rate (%), mean and percentile durations (ms)",
    tag: "functions",
    auth: true,
    status: 200,
    response: FunctionMetrics,
    errors: ["function_not_found"],
  },
  {
    operationId: "listDeliveries",
    method: "GET",
    path: "/functions/{ref}/deliveries",
    summary: "The function's webhook deliveries, newest first (limit 1..500, default 50)",
    tag: "webhooks",
    auth: true,
    status: 200,
    query: DeliveriesQuery,
    response: DeliveryList,
    errors: ["function_not_found", "invalid_limit"],
  },
  {
    operationId: "rotateWebhookSecret",
    method: "POST",
    path: "/functions/{ref}/webhook-secret",
    summary: "Replace the webhook signing secret (answered once; the old one stops signing at once)",
    tag: "webhooks",
    auth: true,
    status: 200,
    response: WebhookSecretAnswer,
    errors: ["function_not_found"],
  },
  {
    operationId: "getUsage",
    method: "GET",
    path: "/usage",
    summary: "Metered usage in a month (invocations, execution ms, GB-seconds, browser-session ms and s), the plan's limits and what remains",
    tag: "usage",
    auth: true,
    status: 200,
    query: UsageQuery,
    response: UsageReport,
  },
  {
    operationId: "setAccountPlan",
    method: "PUT",
    path: "/accounts/{account}/plan",
    summary: "Admin: move an account to another plan",
    tag: "usage",
    auth: true,
    status: 200,
    body: SetPlanBody,
    response: AccountPlan,
    errors: ["forbidden", "account_not_found"],
  },
  {
    operationId: "createApiKey",
    method: "POST",
    path: "/api-keys",
    summary: "Create an API key (the secret is shown once)",
    tag: "keys",
    auth: true,
    status: 201,
    body: CreateApiKeyBody,
    response: CreatedApiKey,
    errors: ["forbidden"],
  },
  {
    operationId: "listApiKeys",
    method: "GET",
    path: "/api-keys",
    summary: "The account's API keys",
    tag: "keys",
    auth: true,
    status: 200,
    response: ApiKeyList,
  },
  {
    operationId: "deleteApiKey",
    method: "DELETE",
    path: "/api-keys/{id}",
    summary: "Revoke an API key",
    tag: "keys",
    auth: true,
    status: 204,
    errors: ["key_not_found"],
  },
  {
    operationId: "mcp",
    method: "POST",
    path: "/mcp",
    summary: "The account's functions as MCP tools (Model Context Protocol, Streamable HTTP, stateless, JSON answers): tools/list, tools/call; a 401 names the protected resource metadata in WWW-Authenticate",
    tag: "mcp",
    auth: true,
    gatewayAuthorizer: false,
    status: 200,
    body: JsonRpcMessage,
    response: JsonRpcMessage,
    headers: ["Accept", "Mcp-Protocol-Version"],
    otherResponses: [
      { status: 202, description: "Notifications or responses only: accepted, no body" },
      // The MCP SDK's transport answers these itself, with JSON-RPC error bodies (docs/mcp.md).
      { status: 400, description: "Not a JSON-RPC message, or an unsupported Mcp-Protocol-Version: a JSON-RPC error", response: JsonRpcMessage },
      { status: 406, description: "Accept does not list both application/json and text/event-stream: a JSON-RPC error", response: JsonRpcMessage },
      { status: 415, description: "Content-Type is not application/json: a JSON-RPC error", response: JsonRpcMessage },
    ],
    errorHeaders: { 401: ["WWW-Authenticate"] },
  },
  {
    operationId: "oauthProtectedResource",
    method: "GET",
    path: "/.well-known/oauth-protected-resource",
    summary: "OAuth 2.0 protected resource metadata of /mcp (RFC 9728): the authorization servers whose tokens it accepts",
    tag: "mcp",
    auth: false,
    status: 200,
    response: ProtectedResourceMetadata,
  },
] as const satisfies readonly RouteSpec[];

export type OperationId = (typeof ROUTE_SPECS)[number]["operationId"];
