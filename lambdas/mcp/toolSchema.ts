import type { ParameterInfo } from "../code/extractParameters";
import type { FunctionItem, VersionItem } from "../functions/types";
import { membersOf, parseType, type TypeNode } from "../invoke/parseTypeText";

/** A JSON Schema (draft 2020-12) as MCP carries it. */
export type JsonSchema = { [key: string]: unknown };

/** A tool's `inputSchema`: always an object schema. */
export interface InputSchema extends JsonSchema {
  type: "object";
  properties: Record<string, JsonSchema>;
  required?: string[];
}

/**
 * The JSON Schema of a function's parameters, as an MCP tool's `inputSchema`. Built from the
 * version's declared parameters (the latest version as the record holds it, unless another is
 * given). The one place that decides a tool's schema: once functions store an `input_schema`,
 * this returns it.
 */
export function inputSchemaOf(fn: Pick<FunctionItem, "variables">, version: Pick<VersionItem, "variables"> = { variables: fn.variables ?? [] }): InputSchema {
  return schemaOfParameters(version.variables);
}

/**
 * Parameters → an object schema: each parameter a property (its declared type mapped by
 * `schemaOfType`, its JSON default as `default`, the declared type as `description` where the
 * schema says less), the required ones listed, no others allowed
 * (an unknown parameter is refused like on `POST /functions/{name}`).
 */
export function schemaOfParameters(variables: readonly ParameterInfo[]): InputSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const variable of variables) {
    const schema: JsonSchema = { ...schemaOfType(parseType(variable.type)) };
    const fallback = defaultValue(variable.default);
    if (fallback !== undefined) schema.default = fallback;
    // Where JSON Schema says less than the declared type (a named type, an object's members), the type says the rest.
    if (variable.type !== "unknown" && (schema.type === undefined || schema.type === "object")) schema.description = `TypeScript type: ${variable.type}`;
    properties[variable.name] = schema;
  }
  const required = variables.filter((v) => v.required).map((v) => v.name);
  return { type: "object", properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false };
}

/**
 * A declared type (as parseTypeText models it) as JSON Schema: string, number, boolean, null,
 * string/number/boolean literals (`const`, or `enum` for a union of them), arrays (`items`),
 * objects, and unions of these (`anyOf`; `undefined` members dropped: absence is `required`'s
 * business). What the model does not know (named types, intersections, `unknown`) is `{}`.
 */
export function schemaOfType(node: TypeNode): JsonSchema {
  switch (node.kind) {
    case "string":
    case "number":
    case "boolean":
    case "null":
    case "object":
      return { type: node.kind };
    case "literal":
      return { type: typeof node.value, const: node.value };
    case "array":
      return { type: "array", items: schemaOfType(node.element) };
    case "union":
      return schemaOfUnion(membersOf(node).filter((m) => m.kind !== "undefined"));
    case "any":
    case "nonNullish":
    case "undefined":
      return {};
  }
}

function schemaOfUnion(members: TypeNode[]): JsonSchema {
  if (members.length === 0) return {};
  if (members.some((m) => m.kind === "any" || m.kind === "nonNullish")) return {};
  if (members.length === 1) return schemaOfType(members[0] as TypeNode);
  const literals = members.filter((m): m is Extract<TypeNode, { kind: "literal" }> => m.kind === "literal");
  if (literals.length === members.length) {
    const types = [...new Set(literals.map((m) => typeof m.value))];
    return { ...(types.length === 1 ? { type: types[0] } : {}), enum: literals.map((m) => m.value) };
  }
  return { anyOf: members.map(schemaOfType) };
}

/** A parameter's default (JSON text, as extractParameters reports it) as a value; undefined when there is none. */
function defaultValue(json: string | undefined): unknown {
  if (json === undefined) return undefined;
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return undefined;
  }
}
