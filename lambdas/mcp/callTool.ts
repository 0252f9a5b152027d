import { ErrorCode, type McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { protocolError } from "./protocolError";
import { rateLimitKey } from "../http/rateLimiter";
import type { Deps } from "../deps";
import type { RouteRequest } from "../http/defineRoute";
import { errorResult } from "../http/errorBody";
import type { HttpResult } from "../http/response";
import { invokeFunction } from "../invoke/invokeFunction";
import { NAME_PATTERN } from "../schemas/functionSchemas";
import type { JsonSchema } from "../code/jsonSchema";
import { sharedSchemaChecker } from "../invoke/schemaChecker";
import { jsonTextDeeperThan } from "../runner/jsonDepth";
import { MAX_JSON_DEPTH } from "../runner/outputLimits";
import { toolOutputSchema, type ToolOutputSchema } from "./outputSchema";


/** The request headers a tool call's run keeps, as an invocation's does. */
const KEPT_HEADERS = ["x-service-request-origin", "x-service-sdk-version"] as const;

/**
 * `tools/call`: invokes the function named by the tool like `POST /functions/{name}` with the
 * arguments as its parameters (the same checks, limits, metering and sync window; the run's
 * trigger is `mcp`), and turns the answer into a tool result: the run's result, or where to
 * find a run still going, or an error result (`isError`) the model can read and act on. A tool
 * that names no function of the caller's account is a protocol error (unknown tool).
 */
export async function callTool(
  deps: Deps,
  request: RouteRequest<unknown, unknown>,
  name: string,
  args: Record<string, unknown> | undefined,
  options: { chargeRateLimit?: boolean } = {},
): Promise<CallToolResult> {
  if (!NAME_PATTERN.test(name)) throw unknownTool(name);
  const headers: Record<string, string> = {};
  for (const header of KEPT_HEADERS) {
    const value = request.headers[header];
    if (value !== undefined) headers[header] = value;
  }
  const invocation: RouteRequest<unknown, unknown> = {
    event: request.event,
    requestId: request.requestId,
    principal: request.principal,
    body: undefined,
    query: undefined,
    params: { ref: name },
    headers,
    baseUrl: request.baseUrl,
    deadline: request.deadline,
  };
  let answer: HttpResult;
  try {
    // A JSON-RPC batch is one HTTP request: its calls after the first are counted one by one.
    if (options.chargeRateLimit) deps.rateLimiter?.take(rateLimitKey(request.principal));
    answer = await invokeFunction(invocation, deps, args ?? {}, "json", "mcp");
  } catch (error) {
    const failure = errorResult(error, request.requestId, deps.log);
    const body = JSON.parse(failure.body ?? "{}") as { error: { code: string; message: string } };
    if (body.error.code === "function_not_found") throw unknownTool(name);
    const version = failure.headers?.["x-function-version"];
    const declared = await declaredOutput(deps, request.principal.account_id, name, version === undefined ? undefined : Number(version));
    return errorToolResult(body, failure.headers?.["retry-after"], declared !== undefined);
  }
  const declared = await declaredOutput(deps, request.principal.account_id, name, Number(answer.headers?.["x-function-version"]));
  if (answer.statusCode === 202) return stillRunning(answer, declared !== undefined);
  return declared ? checkedResult(answer, declared) : succeeded(answer);
}

/**
 * The tool's outputSchema for the version that ran (or the latest, before a run): what the
 * client validates structured content against. Undefined when it has none.
 */
async function declaredOutput(deps: Deps, accountId: string, name: string, version: number | undefined): Promise<ToolOutputSchema | undefined> {
  const fn = await deps.store.functions.getByName(accountId, name);
  if (!fn) return undefined;
  if (version === undefined || !Number.isInteger(version) || version === fn.latest_version) return toolOutputSchema(fn.output_schema);
  return toolOutputSchema((await deps.store.versions.meta(fn.function_id, version))?.output_schema);
}

function unknownTool(name: string): McpError {
  return protocolError(ErrorCode.InvalidParams, `Unknown tool: ${name.slice(0, 128)}`);
}

/**
 * The run's result: as JSON text, and as structured content when it is a JSON object (nested
 * at most MAX_JSON_DEPTH levels, as every recorded result is: a deeper one stays text only).
 */
function succeeded(answer: HttpResult): CallToolResult {
  const text = answer.body ?? "null";
  const result = jsonTextDeeperThan(text, MAX_JSON_DEPTH) ? null : (JSON.parse(text) as unknown);
  const isObject = typeof result === "object" && result !== null && !Array.isArray(result);
  return {
    content: [{ type: "text", text }],
    ...(isObject ? { structuredContent: result as Record<string, unknown> } : {}),
    _meta: runMeta(answer),
  };
}

/**
 * The result of a tool with an outputSchema: structured content only when it fits the schema
 * (the client rejects any that does not). A result that does not fit its function's declared
 * return type is an error result that says where, with the result as text.
 *
 * `declared` is the outputSchema the client has, not the function's output_schema: its tuples
 * are lists (toolOutputSchema), so this 2020-12 check and a draft-07 client's accept the same.
 */
function checkedResult(answer: HttpResult, declared: ToolOutputSchema): CallToolResult {
  const text = answer.body ?? "null";
  if (jsonTextDeeperThan(text, MAX_JSON_DEPTH)) {
    return { isError: true, content: [{ type: "text", text: `The run's result is nested more than ${MAX_JSON_DEPTH} levels deep: it cannot be structured content` }], _meta: runMeta(answer) };
  }
  const result = JSON.parse(text) as unknown;
  const mismatch = sharedSchemaChecker().check(declared as JsonSchema, result);
  if (!mismatch) return succeeded(answer);
  const where = mismatch.segments.length > 0 ? ` at /${mismatch.segments.join("/")}` : "";
  return {
    isError: true,
    content: [
      { type: "text", text: `The run succeeded, but its result does not match the function's declared return type${where} (${mismatch.problem.replace("_", " ")}). The result: ${text}` },
    ],
    _meta: runMeta(answer),
  };
}

/**
 * A run that outlasted the sync window: its id and where to read its result later. For a tool
 * with an outputSchema this is not its output, so it cannot be structured content: it is an
 * error result (the tool gave no output in time), with the same facts as text and in _meta.
 */
function stillRunning(answer: HttpResult, hasOutputSchema: boolean): CallToolResult {
  const accepted = JSON.parse(answer.body ?? "{}") as { run_id: string; status: string; status_url: string };
  const running = {
    run_id: accepted.run_id,
    status: accepted.status,
    status_url: accepted.status_url,
    message: `The run is still ${accepted.status}; GET ${accepted.status_url} with the same bearer token returns its result once it ends.`,
  };
  const content: CallToolResult["content"] = [{ type: "text", text: JSON.stringify(running) }];
  const meta = { ...runMeta(answer), "browserfn/status": running.status, "browserfn/status_url": running.status_url };
  if (hasOutputSchema) return { isError: true, content, _meta: meta };
  return { content, structuredContent: running, _meta: meta };
}

/**
 * A failure as an error result: the API's error body (code, message, details: invalid
 * parameters, the run's id and stack) as text and structured content, after a line a model
 * reads first (with when to retry, for a limit).
 */
function errorToolResult(
  body: { error: { code: string; message: string } },
  retryAfter: string | number | boolean | undefined,
  hasOutputSchema: boolean,
): CallToolResult {
  const retry = retryAfter === undefined ? "" : ` Retry after ${String(retryAfter)} seconds.`;
  const summary = `${body.error.code}: ${body.error.message}${retry}`;
  return {
    isError: true,
    content: [
      { type: "text", text: summary },
      { type: "text", text: JSON.stringify(body) },
    ],
    // A client checks structured content against the tool's outputSchema, errors' too: with one, the text alone.
    ...(hasOutputSchema ? {} : { structuredContent: body }),
  };
}

function runMeta(answer: HttpResult): Record<string, unknown> {
  const header = (name: string) => {
    const value = answer.headers?.[name];
    return value === undefined ? undefined : String(value);
  };
  const version = header("x-function-version");
  const duration = header("x-duration-ms");
  return {
    "browserfn/run_id": header("x-run-id"),
    ...(version === undefined ? {} : { "browserfn/version": Number(version) }),
    ...(duration === undefined ? {} : { "browserfn/duration_ms": Number(duration) }),
  };
}
