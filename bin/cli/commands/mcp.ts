import { flag, positionals, stringOption, UsageError } from "../args";
import type { Command } from "../command";
import { resolveConnection } from "../config";
import { KEY_VARIABLE, MCP_CLIENTS, type McpClient, mcpClientConfigs } from "../mcpClientConfigs";

const TITLES: Record<McpClient, string> = {
  "claude-code": "Claude Code (run once)",
  "claude-desktop": "Claude Desktop (claude_desktop_config.json, through the mcp-remote bridge; restart Claude after editing)",
  cursor: "Cursor (~/.cursor/mcp.json, or .cursor/mcp.json in a project)",
  vscode: "VS Code (.vscode/mcp.json)",
};

export const mcp: Command = {
  summary: "print the MCP client configuration (Claude Code, Claude Desktop, Cursor, VS Code) for this service's /mcp endpoint",
  usage: `browserfn mcp [--client ${MCP_CLIENTS.join("|")}] [--name NAME] [--show-key]`,
  options: { client: { type: "string" }, name: { type: "string" }, "show-key": { type: "boolean" } },
  async run({ args, io, out }) {
    positionals(args, []);
    const client = stringOption(args, "client");
    if (client !== undefined && !(MCP_CLIENTS as readonly string[]).includes(client)) {
      throw new UsageError(`--client must be one of ${MCP_CLIENTS.join(", ")}, not '${client}'`);
    }
    const name = stringOption(args, "name") ?? "browserfn";
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(name)) throw new UsageError(`--name must be 1-64 of [A-Za-z0-9_-], not '${name}'`);
    const showKey = flag(args, "show-key");
    const connection = await resolveConnection(io.env);
    const url = `${connection.url.replace(/\/+$/, "")}/mcp`;
    const configs = mcpClientConfigs({ url, name, apiKey: showKey ? connection.apiKey : null });
    const print = (config: string | Record<string, unknown>) => (typeof config === "string" ? out.line(config) : out.line(JSON.stringify(config, null, 2)));
    if (client !== undefined) {
      // One client's configuration alone, to paste or redirect into its file.
      if (out.json) out.printJson(configs[client as McpClient]);
      else print(configs[client as McpClient]);
      return 0;
    }
    if (out.json) {
      out.printJson({ url, configs });
      return 0;
    }
    out.line(`MCP endpoint: ${url}`);
    out.line(
      showKey
        ? "The configurations below hold your API key: keep them out of version control."
        : `The API key is not shown: the configurations read ${KEY_VARIABLE} from the environment (Cursor, Claude Code), ask for it (VS Code) or need it pasted (Claude Desktop). --show-key writes it in.`,
    );
    for (const each of MCP_CLIENTS) {
      out.line();
      out.line(`${TITLES[each]}:`);
      print(configs[each]);
    }
    return 0;
  },
};
