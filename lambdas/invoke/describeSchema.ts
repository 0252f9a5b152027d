import { acceptsAnything, unionMembers, type JsonSchema } from "../code/jsonSchema";

/** Longest `expected` text an error carries. */
const MAX_TEXT = 80;

/**
 * A schema in TypeScript-like words, for the `expected` of a parameter problem: `string`,
 * `number[]`, `"a" | "b"`, `string | null`, `object`, `unknown`.
 */
export function describeSchema(schema: JsonSchema): string {
  const text = describe(schema);
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT - 3)}...` : text;
}

function describe(schema: JsonSchema): string {
  if (schema.enum) return schema.enum.map((v) => JSON.stringify(v)).join(" | ");
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.anyOf || Array.isArray(schema.type)) return unionMembers(schema).map(describe).join(" | ");
  if (schema.not) return Object.keys(schema.not).length === 0 ? "undefined" : "{}";
  switch (schema.type) {
    case "array": {
      if (schema.prefixItems) return `[${schema.prefixItems.map(describe).join(", ")}]`;
      if (!schema.items) return "unknown[]";
      const items = describe(schema.items);
      return items.includes(" | ") ? `(${items})[]` : `${items}[]`;
    }
    case "integer": return "integer";
    case undefined: return acceptsAnything(schema) ? "unknown" : "value";
    default: return schema.type;
  }
}

/** True when the schema names literal values (`enum`, `const`), here or in a union member. */
export function hasLiterals(schema: JsonSchema): boolean {
  return unionMembers(schema).some((member) => member.enum !== undefined || member.const !== undefined);
}
