import { ErrorCode, McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Deps } from "../deps";
import type { RouteRequest } from "../http/defineRoute";
import { errorResult } from "../http/errorBody";
import type { HttpResult } from "../http/response";
import { invokeFunction } from "../invoke/invokeFunction";
import { NAME_PATTERN } from "../schemas/functionSchemas";

/** The request headers a tool call's run keeps, as an invocation's does. */
const KEPT_HEADERS = ["x-service-request-origin", "x-service-sdk-version"] as const;

/**
 * `tools/call`: invokes the function named by the tool like `POST /functions/{name}` with the
 * arguments as its parameters (the same checks, limits, metering and sync window; the run's
 * trigger is `mcp`), and turns the answer into a tool result: the run's result, or where to
 * find a run still going, or an error result (`isError`) the model can read and act on. A tool
 * that names no function of the caller's account is a protocol error (unknown tool).
 */
export async function callTool(deps: Deps, request: RouteRequest<unknown, unknown>, name: string, args: Record<string, unknown> | undefined): Promise<CallToolResult> {
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
  };
  let answer: HttpResult;
  try {
    answer = await invokeFunction(invocation, deps, args ?? {}, "json", "mcp");
  } catch (error) {
    const failure = errorResult(error, request.requestId, deps.log);
    const body = JSON.parse(failure.body ?? "{}") as { error: { code: string; message: string } };
    if (body.error.code === "function_not_found") throw unknownTool(name);
    return errorToolResult(body, failure.headers?.["retry-after"]);
  }
  return answer.statusCode === 202 ? stillRunning(answer) : succeeded(answer);
}

function unknownTool(name: string): McpError {
  return new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name.slice(0, 128)}`);
}

/** The run's result: as JSON text, and as structured content when it is a JSON object. */
function succeeded(answer: HttpResult): CallToolResult {
  const text = answer.body ?? "null";
  const result = JSON.parse(text) as unknown;
  const isObject = typeof result === "object" && result !== null && !Array.isArray(result);
  return {
    content: [{ type: "text", text }],
    ...(isObject ? { structuredContent: result as Record<string, unknown> } : {}),
    _meta: runMeta(answer),
  };
}

/** A run that outlasted the sync window: its id and where to read its result later. */
function stillRunning(answer: HttpResult): CallToolResult {
  const accepted = JSON.parse(answer.body ?? "{}") as { run_id: string; status: string; status_url: string };
  const running = {
    run_id: accepted.run_id,
    status: accepted.status,
    status_url: accepted.status_url,
    message: `The run is still ${accepted.status}; GET ${accepted.status_url} with the same bearer token returns its result once it ends.`,
  };
  return { content: [{ type: "text", text: JSON.stringify(running) }], structuredContent: running, _meta: runMeta(answer) };
}

/**
 * A failure as an error result: the API's error body (code, message, details: invalid
 * parameters, the run's id and stack) as text and structured content, after a line a model
 * reads first (with when to retry, for a limit).
 */
function errorToolResult(body: { error: { code: string; message: string } }, retryAfter: string | number | boolean | undefined): CallToolResult {
  const retry = retryAfter === undefined ? "" : ` Retry after ${String(retryAfter)} seconds.`;
  const summary = `${body.error.code}: ${body.error.message}${retry}`;
  return {
    isError: true,
    content: [
      { type: "text", text: summary },
      { type: "text", text: JSON.stringify(body) },
    ],
    structuredContent: body,
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
