import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { setOwn, type JsonSchema } from "../code/jsonSchema";
import { openObjects } from "../code/openObjects";

export type ToolOutputSchema = NonNullable<Tool["outputSchema"]>;

/**
 * A tool's `outputSchema`: the function's declared return type (output_schema, derived at
 * deploy), when it is a JSON object, the only kind MCP allows there (`type: "object"` at the
 * root). Undefined for any other return type, or none declared: the tool then has no
 * outputSchema and its result is JSON text (and structured content when it is an object).
 *
 * Objects are open here (openObjects): a function that returns an object with more members
 * than its declared type still fits it, and a client must not reject that result. Tuples are
 * lists of their element types (tuplesAsLists), which every client reads alike.
 */
export function toolOutputSchema(declared: JsonSchema | undefined): ToolOutputSchema | undefined {
  if (!declared || declared.type !== "object") return undefined;
  const { $schema, ...rest } = declared;
  return { ...(tuplesAsLists(openObjects(rest)) as ToolOutputSchema), ...($schema === undefined ? {} : { $schema }) };
}

/**
 * A copy of the schema with every tuple (`prefixItems`, and `items` for its rest or `false`)
 * turned into a list whose `items` is any of its element types, keeping its `minItems` and
 * `maxItems`: `[number, ...string[]]` is a list of at least one number or string.
 *
 * Clients read an outputSchema in their own dialect: the MCP TypeScript SDK's checks with a
 * draft-07 Ajv, which ignores `prefixItems` and applies `items` to every element, so
 * `items: false` rejects any element, and draft-07's own tuple form (`items` as an array) is
 * not 2020-12. A single `items` schema with `minItems`/`maxItems` means the same in both. It
 * checks each element against the tuple's element types, not the one of its position: looser
 * than the declared type, never stricter, so a result that fits the type is never rejected.
 */
function tuplesAsLists(schema: JsonSchema): JsonSchema {
  const copy: JsonSchema = { ...schema };
  if (copy.additionalProperties) copy.additionalProperties = tuplesAsLists(copy.additionalProperties);
  if (copy.properties) {
    const properties: Record<string, JsonSchema> = {};
    for (const [name, property] of Object.entries(copy.properties)) setOwn(properties, name, tuplesAsLists(property));
    copy.properties = properties;
  }
  if (copy.anyOf) copy.anyOf = copy.anyOf.map(tuplesAsLists);
  const { prefixItems, items, ...list } = copy;
  if (!prefixItems) return items ? { ...list, items: tuplesAsLists(items) } : copy;
  const elements = new Map<string, JsonSchema>();
  for (const element of [...prefixItems, ...(items ? [items] : [])].map(tuplesAsLists)) elements.set(JSON.stringify(element), element);
  const [only, ...more] = elements.values();
  if (!only) return list;
  return { ...list, items: more.length === 0 ? only : { anyOf: [only, ...more] } };
}
