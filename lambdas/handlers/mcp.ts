import { defineRoute } from "../http/defineRoute";
import type * as AnswerMcpModule from "../mcp/answerMcp";
import { mcpChallenge } from "../mcp/protectedResource";

/**
 * POST /mcp: the Model Context Protocol over Streamable HTTP, stateless and answered with JSON
 * (no session, no event stream), so that a buffered Lambda answer carries it. Each request gets
 * its own MCP server and the SDK's web-standard transport (see answerMcp). A 401 names the
 * protected resource metadata (`WWW-Authenticate`), where an MCP client finds the OAuth issuer.
 * GET and DELETE have no route: 405 `method_not_allowed`, as the transport allows a stateless
 * server to answer.
 */
export const mcp = defineRoute({ unauthorizedHeaders: mcpChallenge }, async (request, deps) => {
  // Required on the first request, not at start-up: the MCP SDK and the ajv it loads take ≈ 25 MB.
  // A static require, which tsx compiles and esbuild bundles.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { answerMcp } = require("../mcp/answerMcp") as typeof AnswerMcpModule;
  return answerMcp(request, deps);
});
