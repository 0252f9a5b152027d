import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type CallToolResult, McpError } from "@modelcontextprotocol/sdk/types.js";
import { ECHO_FN } from "../helpers/code";
import { expectError, requestJson, sendRequest } from "../helpers/http";
import { startTestService, type TestService } from "../helpers/localService";
import { mcpClients, textOf } from "../helpers/mcpClient";

// The MCP endpoint through the SDK's own client over real HTTP, against the live local service.
// The sync window is 3 s (a quick function's first run fits it on a busy machine), so that a
// slow function of 6 s outlasts it.

const SLOW_FN = `export default async function run(ms: number = 6000) {
  await new Promise((resolve) => setTimeout(resolve, ms));
  return { waited: ms };
}
`;

const TYPED_FN = `export default async function run(url: string, mode: "fast" | "full" = "fast", tags: string[] = [], limit?: number, options?: Options) {
  return { url, mode, tags, limit: limit ?? null };
}
interface Options { deep: boolean }
`;

let t: TestService;
let otherKey: string;

beforeAll(async () => {
  t = await startTestService({ config: { syncWaitSeconds: 3 } });
  await t.deploy("echo", ECHO_FN, { description: "Repeats a message" });
  await t.deploy("typed", TYPED_FN);
  await t.deploy("slow", SLOW_FN, { description: "Waits, then answers" });
  await t.deploy("list-of-two", "export default async () => [1, 2];\n");
  otherKey = await t.newAccount("other");
  await t.deploy("secret-tool", ECHO_FN, { description: "Another account's" }, otherKey);
});
afterAll(async () => {
  await close();
  await t.destroy();
});

const { connect, close } = mcpClients(() => t.url);

describe("POST /mcp through the SDK's client", () => {
  it("completes the initialize handshake: server info, the tools capability, no session id", async () => {
    const client = await connect(t.adminKey);
    expect(client.getServerVersion()).toEqual({ name: "browserfn", version: "1" });
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    expect(client.getInstructions()).toContain("status_url");
    expect((client.transport as StreamableHTTPClientTransport).sessionId).toBeUndefined();
  });

  it("lists the account's active functions with their input schemas, and not another account's", async () => {
    const client = await connect(t.adminKey);
    const { tools, nextCursor } = await client.listTools();
    expect(nextCursor).toBeUndefined();
    expect(tools.map((tool) => tool.name)).toEqual(["echo", "list-of-two", "slow", "typed"]);
    const echo = tools.find((tool) => tool.name === "echo");
    expect(echo?.description).toBe("Repeats a message");
    // The schema derived from the code's types at deploy (the record's input_schema).
    expect(echo?.inputSchema).toEqual({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: { message: { type: "string" }, times: { type: "number", default: 1 } },
      required: ["message"],
      additionalProperties: false,
    });
    const typed = tools.find((tool) => tool.name === "typed");
    expect(typed?.description).toMatch(/^Runs the browserfn function 'typed'.*url \(string, required\); mode \("fast" \| "full", default "fast"\)/);
    // A named interface of the module is followed into its members.
    expect(typed?.inputSchema).toEqual({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: {
        url: { type: "string" },
        mode: { enum: ["fast", "full"], default: "fast" },
        tags: { type: "array", items: { type: "string" }, default: [] },
        limit: { type: "number" },
        options: { type: "object", properties: { deep: { type: "boolean" } }, required: ["deep"], additionalProperties: false },
      },
      required: ["url"],
      additionalProperties: false,
    });

    const other = await connect(otherKey);
    expect((await other.listTools()).tools.map((tool) => tool.name)).toEqual(["secret-tool"]);
    await expect(client.callTool({ name: "secret-tool", arguments: { message: "x" } })).rejects.toThrow(McpError);
    // The server's message is "Unknown tool: …": the client's error adds its prefix once.
    await expect(client.callTool({ name: "secret-tool", arguments: {} })).rejects.toThrow(/^MCP error -32602: Unknown tool: secret-tool$/);
  });

  it("calls a quick function: its result as structured content and JSON text; the run is an 'mcp' run with the request origin", async () => {
    const client = await connect(t.adminKey, { "x-service-request-origin": "mcp-test" });
    const result = (await client.callTool({ name: "echo", arguments: { message: "hi", times: 2 } })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ echo: ["hi", "hi"] });
    expect(JSON.parse(textOf(result))).toEqual({ echo: ["hi", "hi"] });
    const runId = String(result._meta?.["browserfn/run_id"]);
    expect(runId).toMatch(/^run_[0-9a-z]{26}$/);
    const run = await t.call("GET", `/runs/${runId}`);
    expect(run.body).toMatchObject({ function_name: "echo", trigger: "mcp", status: "succeeded", params: { message: "hi", times: 2 } });
    expect((await t.service.deps.store.runs.get(runId))?.request_origin).toBe("mcp-test");

    // A result that is not a JSON object is text only.
    const list = (await client.callTool({ name: "list-of-two", arguments: {} })) as CallToolResult;
    expect(list.structuredContent).toBeUndefined();
    expect(JSON.parse(textOf(list))).toEqual([1, 2]);
  });

  it("answers a run that outlasts the sync window with its run id, status and status URL", async () => {
    const client = await connect(t.adminKey);
    const result = (await client.callTool({ name: "slow", arguments: { ms: 6000 } })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    const running = result.structuredContent as { run_id: string; status: string; status_url: string };
    expect(running).toMatchObject({ run_id: expect.stringMatching(/^run_/), status: "running", status_url: `${t.url}/runs/${running.run_id}` });
    expect(JSON.parse(textOf(result))).toMatchObject({ run_id: running.run_id, status_url: running.status_url });
    // The run goes on and ends; its result is at the status URL.
    let run = await t.call("GET", `/runs/${running.run_id}`);
    for (let i = 0; i < 100 && (run.body.status === "running" || run.body.status === "queued"); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      run = await t.call("GET", `/runs/${running.run_id}`);
    }
    expect(run.body).toMatchObject({ status: "succeeded", trigger: "mcp", result: { waited: 6000 } });
  });

  it("gives a tool error (isError) with the invalid_parameters details for bad arguments, and runs nothing", async () => {
    const client = await connect(t.adminKey);
    const before = (await t.call("GET", "/functions/echo/logs")).body.items.length;
    const result = (await client.callTool({ name: "echo", arguments: { times: "two", extra: 1 } })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^invalid_parameters: Invalid parameters: message is required/);
    const body = result.structuredContent as { error: { code: string; details: { parameters: { name: string; problem: string }[] } } };
    expect(body.error.code).toBe("invalid_parameters");
    expect(body.error.details.parameters.map((p) => `${p.name}:${p.problem}`)).toEqual(["message:required", "times:wrong_type", "extra:unknown"]);
    expect((await t.call("GET", "/functions/echo/logs")).body.items.length).toBe(before);
  });

  it("gives a tool error with the run's error code and message when the run fails", async () => {
    await t.deploy("fails", `export default async function run() { throw new Error("boom"); }\n`);
    const client = await connect(t.adminKey);
    const result = (await client.callTool({ name: "fails", arguments: {} })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^function_error: .*boom/);
    expect(result.structuredContent).toMatchObject({ error: { code: "function_error", details: { status: "failed", run_id: expect.stringMatching(/^run_/) } } });
  });

  it("queues the run when the plan's slots are taken, and says it is still queued (not a tool error)", async () => {
    // The free plan runs 2 at once: two slow runs hold both places past the 3 s window of the third.
    await t.deploy("slow-other", SLOW_FN, {}, otherKey);
    const client = await connect(otherKey);
    const holding = (await Promise.all([0, 1].map(() => client.callTool({ name: "slow-other", arguments: { ms: 7000 } })))) as CallToolResult[];
    const queued = (await client.callTool({ name: "slow-other", arguments: { ms: 10 } })) as CallToolResult;
    expect(queued.isError).toBeFalsy();
    expect(textOf(queued)).toMatch(/still queued/);
    for (const held of holding) {
      const { run_id } = held.structuredContent as { run_id: string };
      let run = await t.call("GET", `/runs/${run_id}`, { token: otherKey });
      for (let i = 0; i < 100 && run.body.status !== "succeeded"; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        run = await t.call("GET", `/runs/${run_id}`, { token: otherKey });
      }
      expect(run.body.status).toBe("succeeded");
    }
  });
});

describe("authentication of /mcp", () => {
  const initialize = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "curl", version: "1" } },
  });
  const mcpHeaders = { "content-type": "application/json", accept: "application/json, text/event-stream" };

  it("answers 401 in the API's error shape with WWW-Authenticate naming the protected resource metadata", async () => {
    for (const token of [null, "bfn_not-a-key"]) {
      const response = await requestJson(t.url, "POST", "/mcp", { body: initialize, token, headers: mcpHeaders });
      expectError(response, 401, token === null ? "missing_token" : "invalid_token");
      expect(response.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${t.url}/.well-known/oauth-protected-resource"`);
    }
    // Other routes' 401s carry no challenge.
    const other = await requestJson(t.url, "GET", "/functions", { token: null });
    expectError(other, 401, "missing_token");
    expect(other.headers.get("www-authenticate")).toBeNull();
  });

  it("answers a plain JSON-RPC POST with JSON, and GET or DELETE with 405", async () => {
    const { response, text } = await sendRequest(t.url, "POST", "/mcp", { body: initialize, token: t.adminKey, headers: mcpHeaders });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(response.headers.get("mcp-session-id")).toBeNull();
    expect(JSON.parse(text)).toMatchObject({ jsonrpc: "2.0", id: 1, result: { serverInfo: { name: "browserfn" } } });
    for (const method of ["GET", "DELETE"]) {
      const refused = await requestJson(t.url, method, "/mcp", { headers: { accept: "text/event-stream" } });
      expectError(refused, 405, "method_not_allowed");
      expect(refused.headers.get("allow")).toBe("POST");
    }
  });

  it("publishes the OAuth protected resource metadata (RFC 9728) without a token", async () => {
    const response = await requestJson(t.url, "GET", "/.well-known/oauth-protected-resource", { token: null });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      resource: `${t.url}/mcp`,
      authorization_servers: [],
      bearer_methods_supported: ["header"],
      resource_name: "browserfn",
    });
  });
});

describe("a JSON-RPC batch of tool calls", () => {
  it("takes one token of the caller's rate limit per call: a batch cannot run more than the limit allows", async () => {
    const limited = await startTestService({ config: { rateLimit: { perSecond: 0.1, burst: 3 } } });
    try {
      await limited.deploy("echo", ECHO_FN);
      const batch = Array.from({ length: 5 }, (_, i) => ({ jsonrpc: "2.0", id: i + 1, method: "tools/call", params: { name: "echo", arguments: { message: `m${i}` } } }));
      // Three tokens: the deploy takes one, the batch's request one (its first call's), its second call the last.
      const { response, text } = await sendRequest(limited.url, "POST", "/mcp", {
        body: JSON.stringify(batch),
        token: limited.adminKey,
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-03-26" },
      });
      expect(response.status).toBe(200);
      const answers = (JSON.parse(text) as { id: number; result: CallToolResult }[]).sort((a, b) => a.id - b.id);
      expect(answers.map((answer) => (answer.result.isError ? "refused" : "ran"))).toEqual(["ran", "ran", "refused", "refused", "refused"]);
      expect(answers[2]?.result.content[0]).toMatchObject({ type: "text", text: expect.stringMatching(/^rate_limited: .* Retry after \d+ seconds\./) });
      // Only the two ran (read from the store: the API is rate limited for this key now).
      expect((await limited.service.deps.store.limits.current("local", new Date())).invocations).toBe(2);
    } finally {
      await limited.destroy();
    }
  });
});
