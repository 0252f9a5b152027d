import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { setOwn, type JsonSchema } from "../code/jsonSchema";

export type ToolOutputSchema = NonNullable<Tool["outputSchema"]>;

/**
 * A tool's `outputSchema`: the function's declared return type (output_schema, derived at
 * deploy), when it is a JSON object, the only kind MCP allows there (`type: "object"` at the
 * root). Undefined for any other return type, or none declared: the tool then has no
 * outputSchema and its result is JSON text (and structured content when it is an object).
 *
 * Objects are open here (no `additionalProperties: false`): TypeScript's types are structural,
 * so a function that returns an object with more members than its declared type still fits
 * it, and a client must not reject that result.
 */
export function toolOutputSchema(declared: JsonSchema | undefined): ToolOutputSchema | undefined {
  if (!declared || declared.type !== "object") return undefined;
  const { $schema, ...rest } = declared;
  return { ...(open(rest) as ToolOutputSchema), ...($schema === undefined ? {} : { $schema }) };
}

/** The schema with every `additionalProperties: false` taken out, at any depth. */
function open(schema: JsonSchema): JsonSchema {
  const copy: JsonSchema = { ...schema };
  if (copy.additionalProperties === false) delete copy.additionalProperties;
  else if (copy.additionalProperties) copy.additionalProperties = open(copy.additionalProperties);
  if (copy.properties) copy.properties = mapValues(copy.properties, open);
  if (copy.items) copy.items = open(copy.items);
  if (copy.prefixItems) copy.prefixItems = copy.prefixItems.map(open);
  if (copy.anyOf) copy.anyOf = copy.anyOf.map(open);
  return copy;
}

function mapValues(record: Record<string, JsonSchema>, map: (schema: JsonSchema) => JsonSchema): Record<string, JsonSchema> {
  const mapped: Record<string, JsonSchema> = {};
  for (const [name, schema] of Object.entries(record)) setOwn(mapped, name, map(schema));
  return mapped;
}
