import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { Deps } from "../deps";
import type { RouteRequest } from "../http/defineRoute";
import type { HttpResult } from "../http/response";
import { createMcpServer } from "./mcpServer";
import { MCP_PATH } from "./protectedResource";
import { toHttpResult, toWebRequest } from "./webExchange";

/**
 * Answers one MCP request (see handlers/mcp.ts) with an MCP server of its own and the SDK's
 * web-standard transport: the event becomes the transport's Request and its Response the answer.
 */
export async function answerMcp(request: RouteRequest<unknown, unknown>, deps: Deps): Promise<HttpResult> {
  const server = createMcpServer(deps, request);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
    maxRequestBodySize: deps.config.maxBodyBytes,
  });
  try {
    await server.connect(transport);
    return await toHttpResult(await transport.handleRequest(toWebRequest(request.event, `${request.baseUrl}${MCP_PATH}`)));
  } finally {
    await server.close();
  }
}
