import { JsonRpcMessage, ProtectedResourceMetadata } from "../../schemas/mcpSchemas";
import type { RouteSpec } from "../routeSpec";

/** MCP: the functions as tools, and the protected-resource document. */
export const MCP_ROUTES = [
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
    // A tools/call's run keeps the x-service-* headers, as an invocation's does.
    headers: ["Accept", "Mcp-Protocol-Version", "x-service-request-origin", "x-service-sdk-version"],
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
