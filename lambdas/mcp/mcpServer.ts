import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { protocolError } from "./protocolError";
import type { Deps } from "../deps";
import type { RouteRequest } from "../http/defineRoute";
import { errorResult } from "../http/errorBody";
import { callTool } from "./callTool";
import { listTools, MAX_TOOLS } from "./toolList";

/** How the server introduces itself in `initialize`. */
export const SERVER_INFO = { name: "browserfn", version: "1" } as const;

const INSTRUCTIONS = [
  "Each tool runs one browserfn function (a browser automation in a fresh headless Chromium) of your account and returns its result.",
  "A run still going after the sync window returns run_id, status and status_url instead: GET the status_url with the same bearer token for the result.",
  "An error result (isError) carries the API's error code and message: invalid_parameters lists each bad argument; a limit says when to retry.",
  `tools/list gives the account's first ${MAX_TOOLS} active functions in name order.`,
].join(" ");

/**
 * An MCP server for one request of one caller (the endpoint is stateless: each POST gets a
 * server and a transport of its own). Tools are the caller's account's functions.
 */
export function createMcpServer(deps: Deps, request: RouteRequest<unknown, unknown>): Server {
  const server = new Server(SERVER_INFO, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    try {
      return { tools: await listTools(deps, request.principal) };
    } catch (error) {
      throw internalError(error, deps, request.requestId);
    }
  });
  // The request took one token of the caller's rate limit; each further call in a batch takes its own.
  let calls = 0;
  server.setRequestHandler(CallToolRequestSchema, async ({ params }) => {
    try {
      return await callTool(deps, request, params.name, params.arguments, { chargeRateLimit: calls++ > 0 });
    } catch (error) {
      if (error instanceof McpError) throw error;
      throw internalError(error, deps, request.requestId);
    }
  });
  return server;
}

/** A failure outside a tool's run as a JSON-RPC error: the API's code and message (logged once, by errorResult, when unexpected). */
function internalError(error: unknown, deps: Deps, requestId: string): McpError {
  const answer = errorResult(error, requestId, deps.log);
  const body = JSON.parse(answer.body ?? "{}") as { error: { code: string; message: string } };
  return protocolError(ErrorCode.InternalError, `${body.error.code}: ${body.error.message}`, body);
}
