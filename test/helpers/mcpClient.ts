import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/** MCP clients (the SDK's own) connected to a service's /mcp; `close` ends them all. */
export function mcpClients(url: () => string): { connect(key: string, headers?: Record<string, string>): Promise<Client>; close(): Promise<void> } {
  const clients: Client[] = [];
  return {
    async connect(key, headers = {}) {
      const client = new Client({ name: "browserfn-test", version: "1.0.0" });
      const transport = new StreamableHTTPClientTransport(new URL(`${url()}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key}`, ...headers } },
      });
      await client.connect(transport);
      clients.push(client);
      return client;
    },
    close: async () => {
      await Promise.all(clients.map((client) => client.close()));
    },
  };
}

/** A tool result's text parts, joined by newlines. */
export const textOf = (result: CallToolResult): string => result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");
