import { parseType } from "../../lambdas/invoke/parseTypeText";
import { mcpChallenge, protectedResourceMetadata } from "../../lambdas/mcp/protectedResource";
import { inputSchemaOf, schemaOfParameters, schemaOfType } from "../../lambdas/mcp/toolSchema";

describe("a tool's input schema from the function's parameters", () => {
  it("maps declared types to JSON Schema, and what it cannot state to {}", () => {
    const cases: [string, unknown][] = [
      ["string", { type: "string" }],
      ["number", { type: "number" }],
      ["boolean", { type: "boolean" }],
      ["string[]", { type: "array", items: { type: "string" } }],
      ["Array<number>", { type: "array", items: { type: "number" } }],
      ["readonly boolean[]", { type: "array", items: { type: "boolean" } }],
      ['"a" | "b" | "c"', { type: "string", enum: ["a", "b", "c"] }],
      ["1 | 2", { type: "number", enum: [1, 2] }],
      ['"on"', { type: "string", const: "on" }],
      ["string | undefined", { type: "string" }],
      ["string | null", { anyOf: [{ type: "string" }, { type: "null" }] }],
      ["Record<string, number>", { type: "object" }],
      ["{ a: number }", { type: "object" }],
      ["unknown", {}],
      ["Options", {}],
      ["A & B", {}],
      ["string | Options", {}],
    ];
    for (const [type, schema] of cases) expect([type, schemaOfType(parseType(type))]).toEqual([type, schema]);
  });

  it("lists each parameter with its default, the required ones, and no others", () => {
    const schema = schemaOfParameters([
      { name: "url", type: "string", required: true },
      { name: "max_items", type: "number", default: "10", required: false },
      { name: "filters", type: "Filters", required: false },
      { name: "anything", type: "unknown", required: false },
    ]);
    expect(schema).toEqual({
      type: "object",
      properties: {
        url: { type: "string" },
        max_items: { type: "number", default: 10 },
        filters: { description: "TypeScript type: Filters" },
        anything: {},
      },
      required: ["url"],
      additionalProperties: false,
    });
    expect(schemaOfParameters([])).toEqual({ type: "object", properties: {}, additionalProperties: false });
  });

  it("reads the latest version from the record unless a version is given", () => {
    const fn = { variables: [{ name: "a", type: "string", required: true }] };
    expect(inputSchemaOf(fn).properties).toEqual({ a: { type: "string" } });
    expect(inputSchemaOf(fn, { variables: [{ name: "b", type: "boolean", required: false }] }).properties).toEqual({ b: { type: "boolean" } });
    expect(inputSchemaOf({ variables: null }).properties).toEqual({});
  });
});

describe("the protected resource metadata of /mcp", () => {
  it("names the MCP endpoint, the configured issuer (or none) and header bearer tokens", () => {
    expect(protectedResourceMetadata("https://api.example.test/prod", "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc")).toEqual({
      resource: "https://api.example.test/prod/mcp",
      authorization_servers: ["https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc"],
      bearer_methods_supported: ["header"],
      resource_name: "browserfn",
    });
    expect(protectedResourceMetadata("http://127.0.0.1:1", null).authorization_servers).toEqual([]);
    expect(mcpChallenge("http://127.0.0.1:1")).toEqual({ "www-authenticate": 'Bearer resource_metadata="http://127.0.0.1:1/.well-known/oauth-protected-resource"' });
  });
});
