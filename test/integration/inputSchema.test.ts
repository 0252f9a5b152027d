import { schemaFromVariables } from "../../lambdas/invoke/schemaFromTypeText";
import { expectError } from "../helpers/http";
import { startTestService, type TestService } from "../helpers/localService";

/** Returns what it was called with; its types cover enums, arrays and nested objects. */
const SEARCH_FN = `
type Region = "eu" | "us";
interface Filter {
  /** The field to match. */
  field: string;
  /** @integer */
  min?: number;
}
/**
 * @param query what to search for
 * @param region where
 */
export default async function run(query: string, region: Region = "eu", filters: Filter[] = [], flags?: boolean[]): Promise<{ query: string; region: Region }> {
  return { query, region, filters, flags };
}
`;

const EXPECTED_SCHEMA = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  properties: {
    query: { type: "string", description: "what to search for" },
    region: { enum: ["eu", "us"], description: "where", default: "eu" },
    filters: {
      type: "array",
      items: {
        type: "object",
        properties: { field: { type: "string", description: "The field to match." }, min: { type: "integer" } },
        required: ["field"],
        additionalProperties: false,
      },
      default: [],
    },
    flags: { type: "array", items: { type: "boolean" } },
  },
  required: ["query"],
  additionalProperties: false,
};

let t: TestService;
let record: { function_id: string };
beforeAll(async () => {
  t = await startTestService();
  record = await t.deploy("search", SEARCH_FN, { description: "Searches a catalogue" });
});
afterAll(() => t.destroy());

describe("the input schema", () => {
  it("is on the record of create, /info, update and fork, with notes on what it cannot express", async () => {
    expect(record).toMatchObject({ input_schema: EXPECTED_SCHEMA });
    expect((await t.call("GET", "/functions/search/info")).body.input_schema).toEqual(EXPECTED_SCHEMA);

    await t.deploy("notes", `export default async (url: string) => url;`);
    const updated = await t.call("PATCH", "/functions/notes", {
      body: { code: `import type { Page } from "puppeteer-core";\nexport default async (url: string, page?: Page) => url;` },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.input_schema.properties).toEqual({ url: { type: "string" }, page: {} });
    expect(updated.body.variables[1]).toEqual({
      name: "page",
      type: "Page",
      required: false,
      schema_note: "page: `Page` is not declared in this module (imported and global types are not followed); any value is accepted",
    });

    const fork = await t.call("POST", `/functions/${record.function_id}/fork`, { body: { name: "search-copy" } });
    expect(fork.status).toBe(201);
    expect(fork.body.input_schema).toEqual(EXPECTED_SCHEMA);
  });

  it("checks invocations: enum violations, wrong nested types and missing required ones, in the one error shape", async () => {
    const bad = await t.call("POST", "/functions/search", {
      body: { region: "asia", filters: [{ field: "a", min: 1.5 }, { min: 1 }], flags: [true, "no"] },
    });
    const error = expectError(bad, 400, "invalid_parameters");
    expect(error.details.parameters).toEqual([
      { name: "query", problem: "required", expected: "string" },
      { name: "region", problem: "wrong_type", expected: "Region", received: '"asia"' },
      { name: "filters", problem: "wrong_type", path: "filters[0].min", expected: "integer", received: "number" },
      { name: "flags", problem: "wrong_type", path: "flags[1]", expected: "boolean", received: "string" },
    ]);
    expect(error.message).toBe(
      'Invalid parameters: query is required; region must be Region (got "asia"); filters[0].min must be integer (got number); flags[1] must be boolean (got string)',
    );
    const nested = expectError(await t.call("POST", "/functions/search", { body: { query: "q", filters: [{ min: 1, extra: true }] } }), 400, "invalid_parameters");
    expect(nested.details.parameters).toEqual([{ name: "filters", problem: "required", path: "filters[0].field", expected: "string" }]);
    expect((await t.call("GET", "/functions/search/metrics")).body.total_calls).toBe(0);
  });

  it("coerces GET query values by the schema", async () => {
    const filters = encodeURIComponent(JSON.stringify([{ field: "price", min: 2 }]));
    const ok = await t.call("GET", `/functions/search?query=shoes&region=us&filters=${filters}&flags=${encodeURIComponent("[true,false]")}`);
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ query: "shoes", region: "us", filters: [{ field: "price", min: 2 }], flags: [true, false] });
    const bad = expectError(await t.call("GET", `/functions/search?query=q&filters=${encodeURIComponent('[{"field":1}]')}`), 400, "invalid_parameters");
    expect(bad.details.parameters).toEqual([{ name: "filters", problem: "wrong_type", path: "filters[0].field", expected: "string", received: "number" }]);
  });

  it("requires of a destructured object only what its type requires: extends, intersections, Partial", async () => {
    const deployed = await t.deploy(
      "opts",
      `interface Base { url?: string }
      interface Opts extends Base { n?: number; mode: "a" | "b" }
      export default async ({ url, n, mode }: Opts) => ({ url, n, mode });`,
    );
    expect(deployed.variables).toEqual([
      { name: "url", type: "string", required: false },
      { name: "n", type: "number", required: false },
      { name: "mode", type: '"a" | "b"', required: true },
    ]);
    expect(deployed.input_schema.required).toEqual(["mode"]);
    const ran = await t.call("POST", "/functions/opts", { body: { mode: "a" } });
    expect(ran.status).toBe(200);
    expect(ran.body).toEqual({ mode: "a" });
    const missing = expectError(await t.call("POST", "/functions/opts", { body: { url: "u" } }), 400, "invalid_parameters");
    expect(missing.details.parameters).toEqual([{ name: "mode", problem: "required", expected: '"a" | "b"' }]);

    const paged = await t.deploy(
      "paged",
      `type Page = { /** page url */ url: string } & { /** @integer */ pages?: number };
      export default async ({ url, pages }: Partial<Page>) => ({ url, pages });`,
    );
    expect(paged.input_schema).toMatchObject({
      properties: { url: { type: "string", description: "page url" }, pages: { type: "integer" } },
      required: [],
    });
    expect((await t.call("GET", "/functions/paged?pages=2")).body).toEqual({ pages: 2 });
    const notInteger = expectError(await t.call("GET", "/functions/paged?pages="), 400, "invalid_parameters");
    expect(notInteger.details.parameters).toEqual([{ name: "pages", problem: "wrong_type", expected: "integer", received: '""' }]);
  });

  it("of a function stored before schemas is built from its type text, and checks what the type text did", async () => {
    const code = `interface Options { depth: number }\nexport default async (url: string, opts?: Options, mode: "a" | "b" = "a") => ({ url, opts, mode });`;
    await t.deploy("legacy", code);
    // A record as versions before this one stored it: no input_schema.
    const store = t.service.deps.store;
    const current = await store.functions.getByName("local", "legacy");
    if (!current) throw new Error("no record");
    const { input_schema: _dropped, ...older } = current;
    expect(await store.functions.replace(current, { ...older, revision: current.revision + 1 })).toBe(true);

    const info = await t.call("GET", "/functions/legacy/info");
    expect(info.body.input_schema).toEqual(schemaFromVariables(info.body.variables));
    expect(info.body.input_schema.properties).toEqual({ url: { type: "string" }, opts: {}, mode: { enum: ["a", "b"], default: "a" } });
    // Named types were never checked: they still are not.
    const ran = await t.call("POST", "/functions/legacy", { body: { url: "u", opts: { depth: "deep" } } });
    expect(ran.status).toBe(200);
    expectError(await t.call("POST", "/functions/legacy", { body: { url: "u", mode: "c" } }), 400, "invalid_parameters");
  });
});

describe("GET /functions/{ref}/openapi.json", () => {
  it("is a one-operation OpenAPI 3.1 document for invoking the function", async () => {
    const response = await t.call("GET", "/functions/search/openapi.json");
    expect(response.status).toBe(200);
    const doc = response.body;
    expect(doc).toMatchObject({
      openapi: "3.1.0",
      info: { title: "search", version: "1" },
      servers: [{ url: t.url }],
      components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
    });
    expect(Object.keys(doc.paths)).toEqual(["/functions/search"]);
    expect(Object.keys(doc.paths["/functions/search"])).toEqual(["post"]);
    const post = doc.paths["/functions/search"].post;
    expect(post).toMatchObject({ operationId: "search", summary: "Searches a catalogue", security: [{ bearer: [] }] });
    const { $schema: _dialect, ...body } = EXPECTED_SCHEMA;
    expect(post.requestBody).toMatchObject({ required: true, content: { "application/json": { schema: body } } });
    // The declared return type, open: a result may have more members than its type declares.
    expect(post.responses["200"].content["application/json"].schema).toEqual({
      type: "object",
      properties: { query: { type: "string" }, region: { enum: ["eu", "us"] } },
      required: ["query", "region"],
    });
    for (const status of ["4XX", "5XX"]) {
      expect(post.responses[status].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/Error" });
    }
    expect(doc.components.schemas.Error.properties.error.required).toEqual(expect.arrayContaining(["code", "message", "request_id", "details"]));
    expect(post.responses["202"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/AcceptedRun" });
    expect(doc.components.schemas.AcceptedRun.required).toEqual(["run_id", "status", "status_url"]);
    // Every $ref resolves inside the document.
    for (const ref of JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)) {
      expect(doc.components.schemas[ref[1] as string]).toBeDefined();
    }
    // Invoking as the document says works.
    const invoked = await t.call("POST", `/functions/search`, { body: { query: "x" } });
    expect(invoked.status).toBe(200);
  });

  it("has the 200 schema {} without a declared return type, and is listed in the service's document", async () => {
    await t.deploy("plain", "export default async (n = 1) => n;");
    const doc = (await t.call("GET", "/functions/plain/openapi.json")).body;
    expect(doc.paths["/functions/plain"].post.responses["200"].content["application/json"].schema).toEqual({});
    expect(doc.paths["/functions/plain"].post.requestBody.required).toBe(false);
    const service = (await t.call("GET", "/openapi.json", { token: null })).body;
    expect(service.paths["/functions/{ref}/openapi.json"].get.operationId).toBe("getFunctionOpenapi");
  });

  it("is visible like /info: 404 for another account's unshared function, by name or id; shared ones by id", async () => {
    const other = await t.newAccount("other-account");
    expectError(await t.call("GET", "/functions/search/openapi.json", { token: other }), 404, "function_not_found");
    expectError(await t.call("GET", `/functions/${record.function_id}/openapi.json`, { token: other }), 404, "function_not_found");
    expectError(await t.call("GET", "/functions/search/openapi.json", { token: null }), 401, "missing_token");

    expect((await t.call("PATCH", "/functions/search", { body: { shared: true } })).status).toBe(200);
    const shared = await t.call("GET", `/functions/${record.function_id}/openapi.json`, { token: other });
    expect(shared.status).toBe(200);
    expect(Object.keys(shared.body.paths)).toEqual(["/functions/search"]);
    expectError(await t.call("GET", "/functions/search/openapi.json", { token: other }), 404, "function_not_found");
  });
});
