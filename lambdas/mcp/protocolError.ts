import { McpError } from "@modelcontextprotocol/sdk/types.js";

/**
 * A JSON-RPC error for the client, with `message` as given: McpError's constructor prefixes
 * its message with `MCP error <code>: `, and the SDK sends the message as it is, so a client
 * (whose own McpError adds the prefix again) showed it twice.
 */
export function protocolError(code: number, message: string, data?: unknown): McpError {
  const error = new McpError(code, message, data);
  error.message = message;
  return error;
}
