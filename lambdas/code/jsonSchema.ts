/**
 * The JSON Schema (draft 2020-12) subset that browserfn derives for a function's parameters.
 * Only these keywords are ever written, so every consumer (the validator, the dashboard's form,
 * the per-function OpenAPI document) knows them all.
 */

export const JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema";

export type SchemaType = "string" | "number" | "integer" | "boolean" | "null" | "array" | "object";
export type LiteralValue = string | number | boolean | null;

export type JsonSchema = {
  $schema?: string;
  type?: SchemaType | SchemaType[];
  enum?: LiteralValue[];
  const?: LiteralValue;
  items?: JsonSchema | false;
  prefixItems?: JsonSchema[];
  minItems?: number;
  maxItems?: number;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: JsonSchema | false;
  anyOf?: JsonSchema[];
  not?: JsonSchema;
  description?: string;
  default?: unknown;
};

/** The schema of a function's call parameters: one object, a property per parameter. */
export type InputSchema = JsonSchema & {
  type: "object";
  properties: Record<string, JsonSchema>;
  required: string[];
  additionalProperties: false;
};

/** Sets `key` as an own, enumerable property, even when it is `__proto__`. */
export function setOwn<T>(target: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** The value of an own property only (never one inherited from a prototype). */
export function getOwn<T>(target: Record<string, T> | undefined, key: string): T | undefined {
  return target && Object.hasOwn(target, key) ? target[key] : undefined;
}

/** The whole-call schema over `properties`, with `required` in parameter order. */
export function inputSchema(properties: Record<string, JsonSchema>, required: string[]): InputSchema {
  const plain: Record<string, JsonSchema> = {};
  for (const [name, schema] of Object.entries(properties)) setOwn(plain, name, schema);
  return { $schema: JSON_SCHEMA_DIALECT, type: "object", properties: plain, required, additionalProperties: false };
}

/**
 * The schema as JSON text and back (how it is stored: any depth and any number fit in a string).
 * A deploy stores one schema twice (the version and the function record), up to 64 KB each:
 * the text is kept by the schema object, which nothing changes once it is derived.
 */
export function schemaToText(schema: JsonSchema): string {
  let text = textOf.get(schema);
  if (text === undefined) textOf.set(schema, (text = JSON.stringify(schema)));
  return text;
}

const textOf = new WeakMap<JsonSchema, string>();

export function schemaFromText<T extends JsonSchema>(text: unknown): T | undefined {
  if (typeof text !== "string") return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as T) : undefined;
  } catch {
    return undefined;
  }
}

/** `{}`, `true`-like: a schema that accepts any value (only annotations in it). */
export function acceptsAnything(schema: JsonSchema): boolean {
  return Object.keys(schema).every((key) => key === "description" || key === "default" || key === "$schema");
}

/** The members of a schema's union (`anyOf`, or each entry of a `type` list), flattened. */
export function unionMembers(schema: JsonSchema): JsonSchema[] {
  if (schema.anyOf) return schema.anyOf.flatMap(unionMembers);
  if (Array.isArray(schema.type)) return schema.type.map((type) => ({ ...schema, type }));
  return [schema];
}
