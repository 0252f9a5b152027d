import type { ParameterInfo } from "../code/extractParameters";
import { getOwn, unionMembers, type InputSchema, type JsonSchema } from "../code/jsonSchema";
import { ApiError } from "../http/errors";
import { jsonBytes, MAX_INVOKE_PARAMS_BYTES, MAX_STORED_DEPTH, unstorablePart } from "../schemas/storableJson";
import { coerceQuery } from "./coerceQuery";
import { describeSchema, hasLiterals } from "./describeSchema";
import { type SchemaChecker, sharedSchemaChecker } from "./schemaChecker";
import { schemaFromVariables } from "./schemaFromTypeText";

/**
 * Checks an invocation's parameters against the version's input schema (JSON Schema 2020-12,
 * derived from the TypeScript types at deploy; see deriveSchemas), before anything runs. A
 * version deployed before schemas existed is checked against schemaFromVariables: the schema of
 * its declared type text, which checks what the type-text checker always did.
 */

/**
 * How deep the checker follows nested arrays; a deeper value is rejected as too deeply nested.
 * One level less than the store can keep below a parameter, so what the checker accepts is storable.
 */
export const MAX_CHECK_DEPTH = MAX_STORED_DEPTH - 1;

export interface ParameterProblem {
  name: string;
  problem: "required" | "unknown" | "wrong_type" | "invalid_json" | "too_deeply_nested" | "unsupported_value";
  /** Where inside the value the problem is (`tags[2]`), when it is not the value itself. */
  path?: string;
  /** The declared type text (of the element at `path` when there is one). */
  expected?: string;
  received?: string;
  /** Why an `unsupported_value` cannot be kept with the run. */
  reason?: string;
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  return typeof value;
}

function preview(value: unknown): string {
  const json = JSON.stringify(value) ?? String(value);
  return json.length > 40 ? `${json.slice(0, 37)}...` : json;
}

function describe(value: unknown, showValue: boolean): string {
  const primitive = typeof value === "string" || typeof value === "boolean" || typeof value === "number";
  return showValue && primitive ? preview(value) : kindOf(value);
}

/** The first array nested deeper than MAX_CHECK_DEPTH where the schema types its elements; undefined when none. */
function tooDeep(schema: JsonSchema, value: unknown, path: string, depth: number): ParameterProblem | undefined {
  if (!Array.isArray(value)) return undefined;
  const items = unionMembers(schema).find((member) => member.type === "array" && member.items)?.items;
  if (!items || Object.keys(items).length === 0) return undefined;
  if (depth >= MAX_CHECK_DEPTH) return { name: "", problem: "too_deeply_nested", path, expected: describeSchema(schema), received: "array" };
  for (let i = 0; i < value.length; i++) {
    const problem = tooDeep(items, value[i] as unknown, `${path}[${i}]`, depth + 1);
    if (problem) return problem;
  }
  return undefined;
}

/** `opts.items[2].name` from a parameter's name and the JSON Pointer segments into its value. */
function pathOf(name: string, segments: string[], value: unknown): string {
  let path = name;
  let node = value;
  for (const segment of segments) {
    if (Array.isArray(node) && /^\d+$/.test(segment)) {
      path += `[${segment}]`;
      node = node[Number(segment)] as unknown;
    } else {
      path += /^[A-Za-z_$][\w$]*$/.test(segment) ? `.${segment}` : `[${JSON.stringify(segment)}]`;
      node = typeof node === "object" && node !== null ? getOwn(node as Record<string, unknown>, segment) : undefined;
    }
  }
  return path;
}

/**
 * What a parameter itself is expected to be: its declared type text, or its schema's words when a
 * JSDoc hint made its numbers integers (which the type text does not say).
 */
function expectedOf(variable: ParameterInfo, schema: JsonSchema): string {
  const described = describeSchema(schema);
  return /\binteger\b/.test(described) ? described : variable.type;
}

/** One parameter's value, coerced when it comes from the query; a problem entry when it does not fit. */
function validateOne(
  checker: SchemaChecker,
  variable: ParameterInfo,
  schema: JsonSchema,
  given: unknown,
  fromQuery: boolean,
): { value: unknown } | ParameterProblem {
  const { name } = variable;
  let value = given;
  if (fromQuery) {
    if (typeof given !== "string") return { name, problem: "wrong_type", expected: expectedOf(variable, schema), received: kindOf(given) };
    const coerced = coerceQuery(schema, given);
    if (!coerced.ok) return { name, problem: coerced.problem, expected: expectedOf(variable, schema), received: preview(given) };
    value = coerced.value;
  }
  const deep = tooDeep(schema, value, name, 0);
  if (deep) return { ...deep, name };
  const mismatch = checker.check(schema, value);
  if (!mismatch) return { value };
  const at = mismatch.segments.length === 0 ? {} : { path: pathOf(name, mismatch.segments, value) };
  switch (mismatch.problem) {
    case "required": return { name, problem: "required", ...at, expected: describeSchema(mismatch.schema) };
    case "unknown": return { name, problem: "unknown", ...at };
    case "wrong_type": {
      // The parameter itself is described as expectedOf says; a part of it by its schema.
      const expected = mismatch.segments.length === 0 ? expectedOf(variable, mismatch.schema) : describeSchema(mismatch.schema);
      return { name, problem: "wrong_type", ...at, expected, received: describe(mismatch.data, hasLiterals(mismatch.schema)) };
    }
  }
}

function describeProblem(p: ParameterProblem): string {
  const where = p.path ?? p.name;
  switch (p.problem) {
    case "required": return `${where} is required`;
    case "unknown": return p.path ? `${p.path} is not a property of its object` : `${p.name} is not a parameter of this function`;
    case "invalid_json": return `${p.name} must be JSON text of ${p.expected} (got ${p.received})`;
    case "too_deeply_nested": return `${where} is too deeply nested (limit ${MAX_CHECK_DEPTH} levels)`;
    case "wrong_type": return `${where} must be ${p.expected} (got ${p.received})`;
    case "unsupported_value": return `${where} cannot be kept with the run: ${p.reason}`;
  }
}

/**
 * Checks an invocation's parameters and returns the provided ones by name (defaults are not
 * injected: the automation applies its own). `input` is the parsed JSON body for "json" (it must
 * be an object) or the query values for "query" (strings, coerced by the schema's types). Every
 * problem — missing required, unknown name, wrong type — is collected into one 400
 * `invalid_parameters` error whose details list `{ name, problem, path?, expected?, received? }`.
 * `schema` is the version's input schema; without one (versions deployed before schemas), the
 * schema of the declared type text. `checker` compiles and caches the schemas (one per process
 * by default: compiled validators are pure).
 */
export function validateParams(
  variables: ParameterInfo[],
  input: unknown,
  source: "json" | "query",
  schema: InputSchema = schemaFromVariables(variables),
  checker: SchemaChecker = sharedSchemaChecker(),
): Record<string, unknown> {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    const received = kindOf(input);
    throw new ApiError("invalid_parameters", `Parameters must be a JSON object (got ${received})`, {
      parameters: [],
      received,
    });
  }
  const declared = new Map(variables.map((v) => [v.name, v]));
  const problems: ParameterProblem[] = [];
  const result: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const variable of declared.values()) {
    const { name } = variable;
    const own = getOwn(schema.properties, name) ?? {};
    if (!Object.hasOwn(input, name)) {
      if (variable.required) problems.push({ name, problem: "required", expected: expectedOf(variable, own) });
      continue;
    }
    const given: unknown = Object.getOwnPropertyDescriptor(input, name)?.value;
    const outcome = validateOne(checker, variable, own, given, source === "query");
    if ("problem" in outcome) problems.push(outcome);
    else {
      // Parameters are kept with the run as JSON text: only their nesting is bounded.
      const unstorable = unstorablePart(outcome.value, name, 1, "text");
      if (unstorable) problems.push({ name, problem: "unsupported_value", ...(unstorable.path === name ? {} : { path: unstorable.path }), reason: unstorable.reason });
      else result[name] = outcome.value;
    }
  }
  for (const name of Object.keys(input)) {
    if (!declared.has(name)) problems.push({ name, problem: "unknown" });
  }
  if (problems.length > 0) {
    const message = `Invalid parameters: ${problems.map(describeProblem).join("; ")}`;
    throw new ApiError("invalid_parameters", message, { parameters: problems });
  }
  const params = Object.fromEntries(Object.entries(result));
  const bytes = jsonBytes(params);
  if (bytes > MAX_INVOKE_PARAMS_BYTES) {
    throw new ApiError("invalid_parameters", `Parameters are ${bytes} bytes of JSON; the limit is ${MAX_INVOKE_PARAMS_BYTES}`, {
      parameters: [],
      bytes,
      limit: MAX_INVOKE_PARAMS_BYTES,
    });
  }
  return params;
}
