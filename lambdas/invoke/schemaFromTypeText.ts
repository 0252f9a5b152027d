import type { ParameterInfo } from "../code/extractParameters";
import { inputSchema, setOwn, type InputSchema, type JsonSchema, type LiteralValue, type SchemaType } from "../code/jsonSchema";
import { parseType, type TypeNode } from "./parseTypeText";

/**
 * The input schema of a version deployed before schemas were derived at deploy, built from its
 * ParameterInfo type text alone (parseTypeText's small model). It checks exactly what the
 * type-text checker checked: primitives, literal unions, arrays element by element; object types
 * only as "an object" (members unchecked); named types, generics and the rest as any value.
 */
export function schemaFromVariables(variables: readonly ParameterInfo[]): InputSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const variable of variables) {
    const schema = schemaOfType(parseType(variable.type));
    if (variable.default !== undefined) {
      try {
        schema.default = JSON.parse(variable.default) as unknown;
      } catch {
        // A default that is not JSON text is left out of the schema (it was never checked).
      }
    }
    setOwn(properties, variable.name, schema);
  }
  return inputSchema(properties, variables.filter((v) => v.required).map((v) => v.name));
}

function schemaOfType(node: TypeNode): JsonSchema {
  switch (node.kind) {
    case "any": return {};
    case "nonNullish": return { not: { type: "null" } };
    case "undefined": return { not: {} };
    case "string": case "number": case "boolean": case "null": case "object": return { type: node.kind };
    case "literal": return { const: node.value };
    case "array": {
      const items = schemaOfType(node.element);
      return Object.keys(items).length === 0 ? { type: "array" } : { type: "array", items };
    }
    case "union": return unionSchema(node.members);
  }
}

function unionSchema(members: TypeNode[]): JsonSchema {
  // A value that is present is never `undefined`: that member only makes the parameter optional.
  const present = members.filter((m) => m.kind !== "undefined");
  if (present.length === 0) return { not: {} };
  if (present.length === 1 && present[0]) return schemaOfType(present[0]);
  const schemas = present.map(schemaOfType);
  if (schemas.some((s) => Object.keys(s).length === 0)) return {};
  if (schemas.every((s) => s.const !== undefined || s.type === "null")) {
    const values: LiteralValue[] = schemas.map((s) => (s.const === undefined ? null : s.const));
    return { enum: [...new Set(values)] };
  }
  if (schemas.every((s) => typeof s.type === "string" && Object.keys(s).length === 1)) {
    return { type: [...new Set(schemas.map((s) => s.type as SchemaType))] };
  }
  return { anyOf: schemas };
}
