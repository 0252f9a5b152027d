import type { z } from "zod";
import {
  CreateFunctionBody,
  ForkFunctionBody,
  FunctionList,
  FunctionOpenapiDocument,
  FunctionRecord,
  ListFunctionsQuery,
  UpdateFunctionBody,
  VersionCode,
  VersionList,
} from "../schemas/functionSchemas";
import { DASHBOARD_FILES } from "../dashboard/dashboardAssets";
import { ArtifactList } from "../schemas/artifactSchemas";
import { PutSecretBody, SecretList } from "../schemas/secretSchemas";
import { RunEventStream, RunEventsQuery } from "../schemas/runEventSchemas";
import { ApiKeyList, CreateApiKeyBody, CreatedApiKey, SetPlanBody } from "../schemas/keySchemas";
import { AccountPlan, FunctionMetrics, UsageReport } from "../schemas/usageSchemas";
import { DeliveryList, WebhookSecretAnswer } from "../schemas/webhookSchemas";
import { JsonRpcMessage, ProtectedResourceMetadata } from "../schemas/mcpSchemas";

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** What a route is, without its handler: read by the OpenAPI document, the local server and the CDK stack. */
export interface RouteSpec {
  operationId: string;
  method: HttpMethod;
  /** API Gateway path template, e.g. `/functions/{ref}/info`. */
  path: string;
  summary: string;
  auth: boolean;
  status: number;
  body?: z.ZodType;
  query?: z.ZodType;
  response?: z.ZodType;
  /** False leaves the route out of the OpenAPI document (the dashboard's page and files are not API). */
  openapi?: false;
  /** Files the handler reads at run time, relative to the project root; bundled beside its Lambda's code. */
  files?: readonly string[];
  /** Request headers the route reads (named in the OpenAPI document). */
  headers?: readonly { name: string; description: string }[];
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
const INVOKE_HEADERS = [
  { name: "Idempotency-Key", description: "1..255 characters: within 24 h the same key with the same request starts no second run (the answer is replayed with Idempotent-Replayed: true); with another request, 422 idempotency_key_reused" },
  { name: "Prefer", description: "respond-async: answer 202 as soon as the run is recorded" },
  { name: "X-Function-Version", description: "run this version instead of the latest" },
] as const;

export const ROUTE_SPECS = [
  { operationId: "health", method: "GET", path: "/health", summary: "Liveness", auth: false, status: 200 },
  { operationId: "openapi", method: "GET", path: "/openapi.json", summary: "This OpenAPI 3.1 document", auth: false, status: 200 },
  { operationId: "dashboard", method: "GET", path: "/", summary: "The web dashboard (HTML)", auth: false, status: 200, openapi: false, files: DASHBOARD_FILES },
  {
    operationId: "dashboardAsset",
    method: "GET",
    path: "/dashboard/{file}",
    summary: "One of the web dashboard's scripts, its stylesheet or its icon",
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
    auth: true,
    status: 201,
    body: CreateFunctionBody,
    response: FunctionRecord,
  },
  {
    operationId: "listFunctions",
    method: "GET",
    path: "/functions",
    summary: "List the account's functions in name order",
    auth: true,
    status: 200,
    query: ListFunctionsQuery,
    response: FunctionList,
  },
  {
    operationId: "getFunctionInfo",
    method: "GET",
    path: "/functions/{ref}/info",
    summary: "One function record (by name, or by function_id for shared functions)",
    auth: true,
    status: 200,
    response: FunctionRecord,
  },
  {
    operationId: "getFunctionOpenapi",
    method: "GET",
    path: "/functions/{ref}/openapi.json",
    summary: "A one-operation OpenAPI 3.1 document for invoking the function (its input schema as the request body), to import as a tool; visible like /info",
    auth: true,
    status: 200,
    response: FunctionOpenapiDocument,
  },
  {
    operationId: "updateFunction",
    method: "PATCH",
    path: "/functions/{ref}",
    summary: "Update a function; new code adds a version",
    auth: true,
    status: 200,
    body: UpdateFunctionBody,
    response: FunctionRecord,
  },
  {
    operationId: "deleteFunction",
    method: "DELETE",
    path: "/functions/{ref}",
    summary: "Delete a function, its schedule, versions and runtime",
    auth: true,
    status: 204,
  },
  {
    operationId: "listVersions",
    method: "GET",
    path: "/functions/{ref}/versions",
    summary: "Every version of a function, oldest first",
    auth: true,
    status: 200,
    response: VersionList,
  },
  {
    operationId: "getVersion",
    method: "GET",
    path: "/functions/{ref}/versions/{version}",
    summary: "One version with its source code",
    auth: true,
    status: 200,
    response: VersionCode,
  },
  {
    operationId: "forkFunction",
    method: "POST",
    path: "/functions/{ref}/fork",
    summary: "Copy a shared function's latest version into the caller's account",
    auth: true,
    status: 201,
    body: ForkFunctionBody,
    response: FunctionRecord,
  },
  {
    operationId: "invokePost",
    method: "POST",
    path: "/functions/{ref}",
    summary: "Invoke a function with a JSON object of parameters; 200 with its result, or 202 when it outlasts the sync window",
    auth: true,
    status: 200,
    headers: INVOKE_HEADERS,
  },
  {
    operationId: "invokeGet",
    method: "GET",
    path: "/functions/{ref}",
    summary: "Invoke a function with query parameters, coerced to the declared types",
    auth: true,
    status: 200,
    headers: INVOKE_HEADERS,
  },
  {
    operationId: "getRun",
    method: "GET",
    path: "/runs/{run_id}",
    summary: "One run: status, parameters, result or error, timings",
    auth: true,
    status: 200,
  },
  {
    operationId: "listArtifacts",
    method: "GET",
    path: "/runs/{run_id}/artifacts",
    summary: "The files the run kept (artifacts.save, failure screenshots and HTML, downloads)",
    auth: true,
    status: 200,
    response: ArtifactList,
  },
  {
    operationId: "getArtifact",
    method: "GET",
    path: "/runs/{run_id}/artifacts/{name}",
    summary: "One artifact's bytes, with its content type (on AWS: 302 to a short-lived download URL)",
    auth: true,
    status: 200,
  },
  {
    operationId: "getRunEvents",
    method: "GET",
    path: "/runs/{run_id}/events",
    summary: "The run as it happens: server-sent events (status, log, then result or error); Last-Event-ID resumes; on AWS, long polling",
    auth: true,
    status: 200,
    query: RunEventsQuery,
    response: RunEventStream,
    contentType: "text/event-stream",
    headers: [{ name: "Last-Event-ID", description: "the id of the last event received: the stream resumes after it (204 once the run's end was delivered)" }],
  },
  {
    operationId: "getLogs",
    method: "GET",
    path: "/functions/{ref}/logs",
    summary: "The function's latest runs, newest first (limit 1..1000, default 50)",
    auth: true,
    status: 200,
  },
  {
    operationId: "putSecret",
    method: "PUT",
    path: "/functions/{ref}/secrets/{name}",
    summary: "Set one of the function's secrets (its runs read it with secrets.get; the value is never returned and is redacted as [secret])",
    auth: true,
    status: 204,
    body: PutSecretBody,
  },
  {
    operationId: "listSecrets",
    method: "GET",
    path: "/functions/{ref}/secrets",
    summary: "The names of the function's secrets and when each was set (never their values)",
    auth: true,
    status: 200,
    response: SecretList,
  },
  {
    operationId: "deleteSecret",
    method: "DELETE",
    path: "/functions/{ref}/secrets/{name}",
    summary: "Remove one of the function's secrets",
    auth: true,
    status: 204,
  },
  {
    operationId: "getMetrics",
    method: "GET",
    path: "/functions/{ref}/metrics",
    summary: "Call counts, success rate (%), mean and percentile durations (ms)",
    auth: true,
    status: 200,
    response: FunctionMetrics,
  },
  {
    operationId: "listDeliveries",
    method: "GET",
    path: "/functions/{ref}/deliveries",
    summary: "The function's webhook deliveries, newest first (limit 1..500, default 50)",
    auth: true,
    status: 200,
    response: DeliveryList,
  },
  {
    operationId: "rotateWebhookSecret",
    method: "POST",
    path: "/functions/{ref}/webhook-secret",
    summary: "Replace the webhook signing secret (answered once; the old one stops signing at once)",
    auth: true,
    status: 200,
    response: WebhookSecretAnswer,
  },
  {
    operationId: "getUsage",
    method: "GET",
    path: "/usage",
    summary: "Metered usage in a month (invocations, execution ms, GB-seconds, browser-session ms and s), the plan's limits and what remains",
    auth: true,
    status: 200,
    response: UsageReport,
  },
  {
    operationId: "setAccountPlan",
    method: "PUT",
    path: "/accounts/{account}/plan",
    summary: "Admin: move an account to another plan",
    auth: true,
    status: 200,
    body: SetPlanBody,
    response: AccountPlan,
  },
  {
    operationId: "createApiKey",
    method: "POST",
    path: "/api-keys",
    summary: "Create an API key (the secret is shown once)",
    auth: true,
    status: 201,
    body: CreateApiKeyBody,
    response: CreatedApiKey,
  },
  {
    operationId: "listApiKeys",
    method: "GET",
    path: "/api-keys",
    summary: "The account's API keys",
    auth: true,
    status: 200,
    response: ApiKeyList,
  },
  {
    operationId: "deleteApiKey",
    method: "DELETE",
    path: "/api-keys/{id}",
    summary: "Revoke an API key",
    auth: true,
    status: 204,
  },
  {
    operationId: "mcp",
    method: "POST",
    path: "/mcp",
    summary: "The account's functions as MCP tools (Model Context Protocol, Streamable HTTP, stateless, JSON answers): tools/list, tools/call; a 401 names the protected resource metadata in WWW-Authenticate",
    auth: true,
    gatewayAuthorizer: false,
    status: 200,
    body: JsonRpcMessage,
    response: JsonRpcMessage,
    headers: [
      { name: "Accept", description: "must list both application/json and text/event-stream (the answer is application/json)" },
      { name: "Mcp-Protocol-Version", description: "the protocol version negotiated by initialize, on every later request" },
    ],
  },
  {
    operationId: "oauthProtectedResource",
    method: "GET",
    path: "/.well-known/oauth-protected-resource",
    summary: "OAuth 2.0 protected resource metadata of /mcp (RFC 9728): the authorization servers whose tokens it accepts",
    auth: false,
    status: 200,
    response: ProtectedResourceMetadata,
  },
] as const satisfies readonly RouteSpec[];

export type OperationId = (typeof ROUTE_SPECS)[number]["operationId"];
