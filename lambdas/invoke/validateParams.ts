import type { ParameterInfo } from "../code/extractParameters";
import { ApiError } from "../http/errors";
import { jsonBytes, MAX_INVOKE_PARAMS_BYTES, MAX_STORED_DEPTH, unstorablePart } from "../schemas/storableJson";
import { hasLiteral, membersOf, parseType, type TypeNode } from "./parseTypeText";

/**
 * Checks an invocation's parameters against the declared parameter types, before anything runs.
 *
 * Types are read from the declared type text (as `extractParameters` reports it) by a small,
 * explicit grammar, not by the TypeScript compiler. The checker is conservative: it rejects only
 * values that are certainly wrong. It understands `string`, `number` (finite), `boolean`, `null`,
 * `undefined`/`void` (value absent), `unknown`/`any`, `T[]`, `readonly T[]`, `Array<T>`,
 * `ReadonlyArray<T>` (every element checked), tuples (must be an array; elements not checked),
 * unions, string/number/boolean literal types, template literal types (any string), `object`,
 * `Record<…>` and `{ … }` type literals (any non-null, non-array object; members not checked),
 * `{}` (anything but null), `Readonly<T>` and parentheses. Everything else — named interfaces
 * and aliases, other generics, intersections, function, conditional, `keyof`/`typeof` types,
 * `never`, `bigint`, `symbol` — accepts any value.
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

type Mismatch = Required<Pick<ParameterProblem, "path" | "expected" | "received">> & {
  problem: "wrong_type" | "too_deeply_nested";
};

function matches(node: TypeNode, value: unknown): boolean {
  switch (node.kind) {
    case "any": return true;
    case "nonNullish": return value !== null && value !== undefined;
    case "string": return typeof value === "string";
    case "number": return typeof value === "number" && Number.isFinite(value);
    case "boolean": return typeof value === "boolean";
    case "null": return value === null;
    case "undefined": return value === undefined;
    case "literal": return value === node.value;
    case "object": return typeof value === "object" && value !== null && !Array.isArray(value);
    case "array": return Array.isArray(value);
    case "union": return false; // handled by check
  }
}

/** The first place where `value` certainly does not fit `node`, or undefined when it fits. */
function check(node: TypeNode, value: unknown, path: string, depth: number): Mismatch | undefined {
  const wrong = (): Mismatch => ({ problem: "wrong_type", path, expected: node.text, received: describe(value, hasLiteral(node)) });
  if (node.kind === "union") {
    const failures: Mismatch[] = [];
    for (const member of node.members) {
      const failure = check(member, value, path, depth);
      if (!failure) return undefined;
      failures.push(failure);
    }
    return failures.find((f) => f.problem === "too_deeply_nested") ?? wrong();
  }
  if (!matches(node, value)) return wrong();
  if (node.kind !== "array" || node.element.kind === "any") return undefined;
  if (depth >= MAX_CHECK_DEPTH) return { problem: "too_deeply_nested", path, expected: node.text, received: "array" };
  const items = value as unknown[];
  for (let i = 0; i < items.length; i++) {
    const failure = check(node.element, items[i], `${path}[${i}]`, depth + 1);
    if (failure) return failure;
  }
  return undefined;
}

const QUERY_NUMBER = /^-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

type Coerced = { ok: true; value: unknown } | { ok: false; problem: "wrong_type" | "invalid_json" };

function parseJson(text: string): Coerced {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, problem: "invalid_json" };
  }
}

/**
 * Turns a query string into a value of the declared type. Members of a union are tried in this
 * order: number (decimal text), boolean (`true`/`false`), null (`null`), JSON text for array and
 * object types, then the string as is when a string type is a member; a type the checker does
 * not model (`unknown`, named types) takes JSON text and falls back to the raw string.
 */
function coerceQuery(node: TypeNode, raw: string): Coerced {
  const members = membersOf(node);
  const has = (test: (m: TypeNode) => boolean) => members.some(test);
  const literalOf = (m: TypeNode, type: string) => m.kind === "literal" && typeof m.value === type;
  if (has((m) => m.kind === "number" || literalOf(m, "number")) && QUERY_NUMBER.test(raw)) {
    return { ok: true, value: Number(raw) };
  }
  if (has((m) => m.kind === "boolean" || literalOf(m, "boolean")) && (raw === "true" || raw === "false")) {
    return { ok: true, value: raw === "true" };
  }
  if (has((m) => m.kind === "null") && raw === "null") return { ok: true, value: null };
  const jsonOnly = (m: TypeNode) => m.kind === "array" || m.kind === "object";
  let jsonFailed = false;
  if (has(jsonOnly)) {
    const parsed = parseJson(raw);
    if (parsed.ok && typeof parsed.value === "object" && parsed.value !== null) return parsed;
    jsonFailed = !parsed.ok;
  }
  if (has((m) => m.kind === "string" || literalOf(m, "string"))) return { ok: true, value: raw };
  if (has((m) => m.kind === "any" || m.kind === "nonNullish")) {
    const parsed = parseJson(raw);
    return parsed.ok ? parsed : { ok: true, value: raw };
  }
  // Only JSON-text members (null is JSON too): malformed JSON is the clearer report.
  const allJson = members.every((m) => jsonOnly(m) || m.kind === "null" || m.kind === "undefined");
  return { ok: false, problem: jsonFailed && allJson ? "invalid_json" : "wrong_type" };
}

/** One parameter's value, coerced when it comes from the query; a problem entry when it does not fit. */
function validateOne(name: string, node: TypeNode, given: unknown, fromQuery: boolean): { value: unknown } | ParameterProblem {
  let value = given;
  if (fromQuery) {
    if (typeof given !== "string") return { name, problem: "wrong_type", expected: node.text, received: kindOf(given) };
    const coerced = coerceQuery(node, given);
    if (!coerced.ok) return { name, problem: coerced.problem, expected: node.text, received: preview(given) };
    value = coerced.value;
  }
  const mismatch = check(node, value, name, 0);
  if (!mismatch) return { value };
  const { path, ...rest } = mismatch;
  return path === name ? { name, ...rest } : { name, path, ...rest };
}

function describeProblem(p: ParameterProblem): string {
  const where = p.path ?? p.name;
  switch (p.problem) {
    case "required": return `${p.name} is required`;
    case "unknown": return `${p.name} is not a parameter of this function`;
    case "invalid_json": return `${p.name} must be JSON text of ${p.expected} (got ${p.received})`;
    case "too_deeply_nested": return `${where} is too deeply nested (limit ${MAX_CHECK_DEPTH} levels)`;
    case "wrong_type": return `${where} must be ${p.expected} (got ${p.received})`;
    case "unsupported_value": return `${where} cannot be kept with the run: ${p.reason}`;
  }
}

/**
 * Checks an invocation's parameters and returns the provided ones by name (defaults are not
 * injected: the automation applies its own). `input` is the parsed JSON body for "json" (it must
 * be an object) or the query values for "query" (strings, coerced by declared type). Every
 * problem — missing required, unknown name, wrong type — is collected into one 400
 * `invalid_parameters` error whose details list `{ name, problem, path?, expected?, received? }`.
 */
export function validateParams(
  variables: ParameterInfo[],
  input: unknown,
  source: "json" | "query",
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
    if (!Object.hasOwn(input, name)) {
      if (variable.required) problems.push({ name, problem: "required", expected: variable.type });
      continue;
    }
    const given: unknown = Object.getOwnPropertyDescriptor(input, name)?.value;
    const outcome = validateOne(name, parseType(variable.type), given, source === "query");
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
