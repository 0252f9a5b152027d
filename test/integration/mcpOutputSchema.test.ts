import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { startTestService, type TestService } from "../helpers/localService";
import { mcpClients, textOf } from "../helpers/mcpClient";

// Tools whose functions declare an object return type, through the SDK's own client (which
// checks structured results against a tool's outputSchema) over real HTTP. The sync window is
// 3 s (a quick function's first run fits it on a busy machine), so that a 6 s function outlasts it.

let t: TestService;
const { connect, close } = mcpClients(() => t.url);

beforeAll(async () => {
  t = await startTestService({ config: { syncWaitSeconds: 3 } });
});
afterAll(async () => {
  await close();
  await t.destroy();
});

describe("tools whose functions declare an object return type", () => {
  // Their own account, so that its tool list holds only these.
  let key: string;
  const PAGE_FN = `interface Page { title: string; links: number; meta?: { lang: string } }
export default async function run(title: string = "Hello", extra: boolean = false): Promise<Page> {
  const page: any = { title, links: 3 };
  if (extra) page.fetched_at = "now"; // more members than declared: the type still fits
  return page;
}
`;
  beforeAll(async () => {
    key = await t.newAccount("declared", "pro");
    await t.deploy("page", PAGE_FN, {}, key);
    await t.deploy("liar", `export default async function run(): Promise<{ count: number }> { return { count: "many" } as any; }\n`, {}, key);
    await t.deploy("slow-page", `export default async function run(ms: number = 6000): Promise<{ waited: number }> { await new Promise((r) => setTimeout(r, ms)); return { waited: ms }; }\n`, {}, key);
    await t.deploy("tuples", `export default async function run(): Promise<{ pair: [number, string]; rest: [number, ...string[]] }> { return { pair: [1, "a"], rest: [2, "b", "c"] }; }\n`, {}, key);
    await t.deploy("titled", `export default async function run(): Promise<string> { return "a title"; }\n`, {}, key);
  });

  /** A client that listed the tools: the SDK then checks every structured result against its tool's outputSchema. */
  async function listed(): Promise<Client> {
    const client = await connect(key);
    await client.listTools();
    return client;
  }

  it("lists the declared type as the tool's outputSchema, with its objects open; none for a non-object type", async () => {
    const { tools } = await (await connect(key)).listTools();
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    expect(byName.page?.outputSchema).toEqual({
      type: "object",
      properties: {
        title: { type: "string" },
        links: { type: "number" },
        meta: { type: "object", properties: { lang: { type: "string" } }, required: ["lang"] },
      },
      required: ["title", "links"],
    });
    expect(byName["slow-page"]?.outputSchema).toEqual({ type: "object", properties: { waited: { type: "number" } }, required: ["waited"] });
    expect(byName.titled?.outputSchema).toBeUndefined();
    expect(byName.titled?.inputSchema).toMatchObject({ type: "object", properties: {} });
  });

  it("returns a fitting result as structured content, also one with more members than declared", async () => {
    const client = await listed();
    const plain = (await client.callTool({ name: "page", arguments: { title: "Hi" } })) as CallToolResult;
    expect(plain.isError).toBeFalsy();
    expect(plain.structuredContent).toEqual({ title: "Hi", links: 3 });
    const more = (await client.callTool({ name: "page", arguments: { extra: true } })) as CallToolResult;
    expect(more.isError).toBeFalsy();
    expect(more.structuredContent).toEqual({ title: "Hello", links: 3, fetched_at: "now" });
    const text = (await client.callTool({ name: "titled", arguments: {} })) as CallToolResult;
    expect(text.structuredContent).toBeUndefined();
    expect(JSON.parse(textOf(text))).toBe("a title");
  });

  it("lists tuples as lists of their element types, and returns a result with tuples as structured content the client accepts", async () => {
    // The SDK's client checks with a draft-07 Ajv, which does not read `prefixItems`.
    const client = await listed();
    const result = (await client.callTool({ name: "tuples", arguments: {} })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ pair: [1, "a"], rest: [2, "b", "c"] });
    const { tools } = await client.listTools();
    const elements = { anyOf: [{ type: "number" }, { type: "string" }] };
    expect(tools.find((tool) => tool.name === "tuples")?.outputSchema).toEqual({
      type: "object",
      properties: { pair: { type: "array", items: elements, minItems: 2, maxItems: 2 }, rest: { type: "array", items: elements, minItems: 1 } },
      required: ["pair", "rest"],
    });
  });

  it("says so in an error result when a run's result does not fit the declared type (the client would reject it as structured content)", async () => {
    const client = await listed();
    const result = (await client.callTool({ name: "liar", arguments: {} })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    expect(textOf(result)).toBe(`The run succeeded, but its result does not match the function's declared return type at /count (wrong type). The result: {"count":"many"}`);
    const runId = String(result._meta?.["browserfn/run_id"]);
    expect((await t.call("GET", `/runs/${runId}`, { token: key })).body).toMatchObject({ status: "succeeded", result: { count: "many" } });
  });

  it("gives errors and runs that outlast the window as error results without structured content, which the client accepts", async () => {
    const client = await listed();
    const invalid = (await client.callTool({ name: "page", arguments: { title: 5 } })) as CallToolResult;
    expect(invalid.isError).toBe(true);
    expect(invalid.structuredContent).toBeUndefined();
    expect(textOf(invalid)).toMatch(/^invalid_parameters: /);
    expect(JSON.parse(invalid.content[1]?.type === "text" ? invalid.content[1].text : "{}")).toMatchObject({ error: { code: "invalid_parameters" } });

    const running = (await client.callTool({ name: "slow-page", arguments: { ms: 6000 } })) as CallToolResult;
    expect(running.isError).toBe(true);
    expect(running.structuredContent).toBeUndefined();
    const facts = JSON.parse(textOf(running)) as { run_id: string; status: string; status_url: string };
    expect(facts).toMatchObject({ run_id: expect.stringMatching(/^run_/), status: "running", status_url: `${t.url}/runs/${facts.run_id}` });
    expect(running._meta).toMatchObject({ "browserfn/run_id": facts.run_id, "browserfn/status": "running", "browserfn/status_url": facts.status_url });
    let run = await t.call("GET", `/runs/${facts.run_id}`, { token: key });
    for (let i = 0; i < 100 && run.body.status !== "succeeded"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      run = await t.call("GET", `/runs/${facts.run_id}`, { token: key });
    }
    expect(run.body).toMatchObject({ status: "succeeded", result: { waited: 6000 } });
  });

  it("follows the latest version's declared type, and a fork keeps it", async () => {
    await t.call("PATCH", "/functions/titled", { token: key, body: { code: `export default async function run(): Promise<{ n: number }> { return { n: 1 }; }\n` } });
    const client = await listed();
    const latest = (await client.callTool({ name: "titled", arguments: {} })) as CallToolResult;
    expect(latest.structuredContent).toEqual({ n: 1 });
    const tools = () => client.listTools().then(({ tools: list }) => Object.fromEntries(list.map((tool) => [tool.name, tool])));
    expect((await tools()).titled?.outputSchema).toEqual({ type: "object", properties: { n: { type: "number" } }, required: ["n"] });
    const page = (await t.call("GET", "/functions/page/info", { token: key })).body;
    const fork = await t.call("POST", `/functions/${page.function_id}/fork`, { token: key, body: { name: "page-copy" } });
    expect(fork.status).toBe(201);
    expect((await tools())["page-copy"]?.outputSchema).toEqual((await tools()).page?.outputSchema);
  });
});
