import { setOwn, type JsonSchema } from "./jsonSchema";

/** An object schema with its properties listed (what TypeToSchema makes of an object type). */
export function isObjectSchema(schema: JsonSchema): boolean {
  return schema.type === "object" && schema.properties !== undefined;
}

/**
 * One object of the members of all `parts` (object schemas: an intersection's parts, an
 * interface's bases and its own body): a later part's property replaces an earlier one's, a
 * property required by any part is required. Closed unless `open` or a part is open.
 */
export function mergeObjects(parts: JsonSchema[], open = false): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required = new Set<string>();
  for (const part of parts) {
    for (const [name, schema] of Object.entries(part.properties ?? {})) setOwn(properties, name, schema);
    for (const name of part.required ?? []) required.add(name);
  }
  const closed = !open && parts.every((p) => p.additionalProperties === false);
  const schema: JsonSchema = { type: "object", properties, additionalProperties: closed ? false : {} };
  if (required.size > 0) schema.required = [...required];
  return schema;
}

/** `Partial<T>` (`required` false: no property required) or `Required<T>` (every property) of T's object schema. */
export function everyPropertyRequired(object: JsonSchema, required: boolean): JsonSchema {
  const { required: _was, ...rest } = object;
  const names = Object.keys(object.properties ?? {});
  return required && names.length > 0 ? { ...rest, required: names } : rest;
}
