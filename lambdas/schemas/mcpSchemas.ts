import { z } from "zod";

/** `GET /.well-known/oauth-protected-resource` (RFC 9728): where an MCP client gets a token for `/mcp`. */
export const ProtectedResourceMetadata = z
  .object({
    resource: z.string().describe("The MCP endpoint: {base_url}/mcp"),
    authorization_servers: z.array(z.string()).describe("Issuer URLs of the OAuth authorization servers whose access tokens the API accepts (empty: API keys only)"),
    bearer_methods_supported: z.array(z.literal("header")),
    resource_name: z.string(),
  })
  .meta({ id: "ProtectedResourceMetadata" });

const JsonRpcObject = z.looseObject({ jsonrpc: z.literal("2.0") });

/** `POST /mcp`: a JSON-RPC 2.0 message of the Model Context Protocol, or a batch of them; the answer is JSON-RPC too. */
export const JsonRpcMessage = z
  .union([JsonRpcObject, z.array(JsonRpcObject)])
  .describe("A JSON-RPC 2.0 message of the Model Context Protocol (initialize, tools/list, tools/call, …) or a batch of them")
  .meta({ id: "JsonRpcMessage" });
