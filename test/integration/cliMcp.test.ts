import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { cliEnv, runCli } from "../fixtures/cli/runCli";
import { ECHO_FN } from "../helpers/code";
import { startTestService, type TestService } from "../helpers/localService";

describe("browserfn mcp", () => {
  let svc: TestService;
  let configHome: string;
  let env: NodeJS.ProcessEnv;
  const cli = (...args: string[]) => runCli(["mcp", ...args], env);

  beforeAll(async () => {
    svc = await startTestService();
    await svc.deploy("echo", ECHO_FN);
    configHome = await mkdtemp(path.join(tmpdir(), "browserfn-cli-mcp-"));
    env = cliEnv(configHome, { BROWSERFN_URL: `${svc.url}/`, BROWSERFN_API_KEY: svc.adminKey });
  });
  afterAll(async () => {
    await svc?.destroy();
    if (configHome) await rm(configHome, { recursive: true, force: true });
  });

  it("prints each client's configuration for the endpoint without the key, reading it from the environment instead", async () => {
    const { code, stdout, stderr } = await cli();
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    expect(stdout).not.toContain(svc.adminKey);
    expect(stdout).toContain(`MCP endpoint: ${svc.url}/mcp`);
    expect(stdout).toContain(`claude mcp add --transport http browserfn ${svc.url}/mcp --header "Authorization: Bearer $BROWSERFN_API_KEY"`);
    for (const title of ["Claude Code", "Claude Desktop", "Cursor", "VS Code"]) expect(stdout).toContain(title);

    const json = JSON.parse((await cli("--json")).stdout);
    expect(json.url).toBe(`${svc.url}/mcp`);
    expect(json.configs.cursor).toEqual({ mcpServers: { browserfn: { url: `${svc.url}/mcp`, headers: { Authorization: "Bearer ${env:BROWSERFN_API_KEY}" } } } });
    expect(json.configs.vscode.servers.browserfn).toEqual({ type: "http", url: `${svc.url}/mcp`, headers: { Authorization: "Bearer ${input:browserfn-api-key}" } });
    expect(json.configs["claude-desktop"].mcpServers.browserfn).toMatchObject({ command: "npx", args: ["-y", "mcp-remote", `${svc.url}/mcp`, "--header", "Authorization:${BROWSERFN_AUTH_HEADER}", "--allow-http"] });
  });

  it("writes the key in with --show-key: the printed configuration connects an MCP client", async () => {
    const shown = await cli("--client", "cursor", "--show-key", "--name", "bfn-local");
    expect(shown.code).toBe(0);
    const server = JSON.parse(shown.stdout).mcpServers["bfn-local"] as { url: string; headers: Record<string, string> };
    expect(server.headers.Authorization).toBe(`Bearer ${svc.adminKey}`);
    const client = new Client({ name: "cursor-config", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers } }));
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(["echo"]);
    } finally {
      await client.close();
    }
    const claude = await cli("--client", "claude-code", "--show-key");
    expect(claude.stdout.trim()).toBe(`claude mcp add --transport http browserfn ${svc.url}/mcp --header "Authorization: Bearer ${svc.adminKey}"`);
  });

  it("refuses an unknown client or a bad name (exit 2), and says how to log in when there is no configuration", async () => {
    const unknown = await cli("--client", "emacs");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("--client must be one of claude-code, claude-desktop, cursor, vscode");
    expect((await cli("--name", "has space")).code).toBe(2);
    const loggedOut = await runCli(["mcp"], cliEnv(configHome));
    expect(loggedOut.code).toBe(2);
    expect(loggedOut.stderr).toContain("browserfn login");
  });
});
