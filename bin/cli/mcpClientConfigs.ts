/** The MCP clients `browserfn mcp` prints a configuration for. */
export const MCP_CLIENTS = ["claude-code", "claude-desktop", "cursor", "vscode"] as const;
export type McpClient = (typeof MCP_CLIENTS)[number];

/** The environment variable the printed configurations read the key from, unless the key is shown. */
export const KEY_VARIABLE = "BROWSERFN_API_KEY";

export interface McpConnection {
  /** The MCP endpoint: `{base URL}/mcp`. */
  url: string;
  /** The server's name in the client. */
  name: string;
  /** The API key to write into the configurations; null writes a reference to KEY_VARIABLE (or a placeholder) instead. */
  apiKey: string | null;
}

/** Each client's configuration: a shell command (Claude Code) or a JSON document. */
export function mcpClientConfigs(c: McpConnection): Record<McpClient, string | Record<string, unknown>> {
  return {
    "claude-code": claudeCode(c),
    "claude-desktop": claudeDesktop(c),
    cursor: { mcpServers: { [c.name]: { url: c.url, headers: { Authorization: `Bearer ${c.apiKey ?? `\${env:${KEY_VARIABLE}}`}` } } } },
    vscode: vscode(c),
  };
}

/** `claude mcp add --transport http …`; without the key, the shell expands $BROWSERFN_API_KEY when it is run. */
function claudeCode(c: McpConnection): string {
  const header = `Authorization: Bearer ${c.apiKey === null ? `$${KEY_VARIABLE}` : escapeDoubleQuoted(c.apiKey)}`;
  return `claude mcp add --transport http ${shellWord(c.name)} ${shellWord(c.url)} --header "${header}"`;
}

/**
 * Claude Desktop starts local (stdio) servers from its config file: the `mcp-remote` bridge
 * connects it to the endpoint with the header. Its args are written without spaces (a header
 * value comes from `env`), as mcp-remote advises for clients that do not quote arguments.
 */
function claudeDesktop(c: McpConnection): Record<string, unknown> {
  const args = ["-y", "mcp-remote", c.url, "--header", "Authorization:${BROWSERFN_AUTH_HEADER}"];
  if (c.url.startsWith("http://")) args.push("--allow-http");
  const value = `Bearer ${c.apiKey ?? `<your API key: browserfn mcp --show-key>`}`;
  return { mcpServers: { [c.name]: { command: "npx", args, env: { BROWSERFN_AUTH_HEADER: value } } } };
}

/** VS Code's `.vscode/mcp.json`: without the key, VS Code asks for it once and keeps it in its secret storage. */
function vscode(c: McpConnection): Record<string, unknown> {
  const inputId = `${c.name}-api-key`;
  const server = { type: "http", url: c.url, headers: { Authorization: `Bearer ${c.apiKey ?? `\${input:${inputId}}`}` } };
  if (c.apiKey !== null) return { servers: { [c.name]: server } };
  return {
    inputs: [{ type: "promptString", id: inputId, description: "browserfn API key", password: true }],
    servers: { [c.name]: server },
  };
}

function shellWord(text: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(text) ? text : `"${escapeDoubleQuoted(text)}"`;
}

function escapeDoubleQuoted(text: string): string {
  return text.replace(/["\\$`]/g, "\\$&");
}
