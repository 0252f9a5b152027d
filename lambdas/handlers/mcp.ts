import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { defineRoute } from "../http/defineRoute";
import { createMcpServer } from "../mcp/mcpServer";
import { MCP_PATH, mcpChallenge } from "../mcp/protectedResource";
import { toHttpResult, toWebRequest } from "../mcp/webExchange";

/**
 * POST /mcp: the Model Context Protocol over Streamable HTTP, stateless and answered with JSON
 * (no session, no event stream), so that a buffered Lambda answer carries it. Each request gets
 * its own MCP server and the SDK's web-standard transport; the event becomes the transport's
 * Request and its Response the route's answer. A 401 names the protected resource metadata
 * (`WWW-Authenticate`), where an MCP client finds the OAuth issuer. GET and DELETE have no
 * route: 405 `method_not_allowed`, as the transport allows a stateless server to answer.
 */
export const mcp = defineRoute({ unauthorizedHeaders: mcpChallenge }, async (request, deps) => {
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
});
