import { setOwn, type JsonSchema } from "./jsonSchema";

/**
 * A copy of the schema with every `additionalProperties: false` taken out, at any depth
 * (properties, items, tuple members, union members, the schema of other members).
 *
 * For a function's declared return type (output_schema): TypeScript's types are structural,
 * so a function that returns an object with more members than its declared type still fits
 * it, and a client checking the result against the schema must not reject that. The schema
 * itself is left as it was.
 */
export function openObjects(schema: JsonSchema): JsonSchema {
  const copy: JsonSchema = { ...schema };
  if (copy.additionalProperties === false) delete copy.additionalProperties;
  else if (copy.additionalProperties) copy.additionalProperties = openObjects(copy.additionalProperties);
  if (copy.properties) copy.properties = mapValues(copy.properties, openObjects);
  if (copy.items) copy.items = openObjects(copy.items);
  if (copy.prefixItems) copy.prefixItems = copy.prefixItems.map(openObjects);
  if (copy.anyOf) copy.anyOf = copy.anyOf.map(openObjects);
  return copy;
}

function mapValues(record: Record<string, JsonSchema>, map: (schema: JsonSchema) => JsonSchema): Record<string, JsonSchema> {
  const mapped: Record<string, JsonSchema> = {};
  for (const [name, schema] of Object.entries(record)) setOwn(mapped, name, map(schema));
  return mapped;
}
