import { toolOutputSchema } from "../../lambdas/mcp/outputSchema";

describe("toolOutputSchema", () => {
  it("gives none for a return type that is not an object, or none declared", () => {
    for (const declared of [undefined, {}, { type: "string" as const }, { type: "null" as const }, { type: "array" as const, items: { type: "object" as const } }, { anyOf: [{ type: "object" as const }, { type: "null" as const }] }]) {
      expect(toolOutputSchema(declared)).toBeUndefined();
    }
  });

  it("opens every object, at any depth, and changes nothing else", () => {
    const closed = { type: "object" as const, properties: {}, additionalProperties: false as const };
    const declared = {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object" as const,
      properties: {
        list: { type: "array" as const, items: closed },
        pair: { type: "array" as const, prefixItems: [closed, { type: "number" as const }] },
        either: { anyOf: [closed, { type: "string" as const, description: "text" }] },
        map: { type: "object" as const, additionalProperties: closed },
        kind: { enum: ["a", "b"] },
      },
      required: ["list"],
      additionalProperties: false as const,
    };
    const open = { type: "object", properties: {} };
    expect(toolOutputSchema(declared)).toEqual({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: {
        list: { type: "array", items: open },
        pair: { type: "array", items: { anyOf: [open, { type: "number" }] } },
        either: { anyOf: [open, { type: "string", description: "text" }] },
        map: { type: "object", additionalProperties: open },
        kind: { enum: ["a", "b"] },
      },
      required: ["list"],
    });
    // The function's own schema is left as it was.
    expect(declared.additionalProperties).toBe(false);
    expect(declared.properties.list.items.additionalProperties).toBe(false);
  });

  it("turns every tuple into a list of its element types, which draft-07 clients read as 2020-12 does", () => {
    const declared = {
      type: "object" as const,
      properties: {
        pair: { type: "array" as const, prefixItems: [{ type: "number" as const }, { type: "string" as const }], items: false as const, minItems: 2, maxItems: 2 },
        rest: { type: "array" as const, prefixItems: [{ type: "number" as const }], items: { type: "string" as const }, minItems: 1 },
        same: { type: "array" as const, prefixItems: [{ type: "string" as const }, { type: "string" as const }], items: false as const, minItems: 1, maxItems: 2 },
        empty: { type: "array" as const, prefixItems: [], items: false as const, maxItems: 0 },
        nested: {
          type: "array" as const,
          items: { type: "array" as const, prefixItems: [{ type: "boolean" as const }, { type: "array" as const, prefixItems: [{ type: "null" as const }], items: false as const }], items: false as const },
        },
      },
    };
    expect(toolOutputSchema(declared)?.properties).toEqual({
      pair: { type: "array", items: { anyOf: [{ type: "number" }, { type: "string" }] }, minItems: 2, maxItems: 2 },
      rest: { type: "array", items: { anyOf: [{ type: "number" }, { type: "string" }] }, minItems: 1 },
      same: { type: "array", items: { type: "string" }, minItems: 1, maxItems: 2 },
      empty: { type: "array", maxItems: 0 },
      nested: { type: "array", items: { type: "array", items: { anyOf: [{ type: "boolean" }, { type: "array", items: { type: "null" } }] } } },
    });
    expect(declared.properties.pair.prefixItems).toHaveLength(2);
  });

  it("keeps a property named __proto__ as an own property", () => {
    const properties = JSON.parse('{"__proto__": {"type": "string"}}') as Record<string, { type: "string" }>;
    const schema = toolOutputSchema({ type: "object", properties });
    expect(Object.keys(schema?.properties ?? {})).toEqual(["__proto__"]);
  });
});
