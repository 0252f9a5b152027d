import type { ParameterInfo } from "../code/extractParameters";
import { ApiError } from "../http/errors";

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

/** How deep the checker follows nested arrays; a deeper value is rejected as too deeply nested. */
export const MAX_CHECK_DEPTH = 64;
/** Type text nested deeper than this is not modelled (it accepts anything). */
const MAX_PARSE_DEPTH = 256;

export interface ParameterProblem {
  name: string;
  problem: "required" | "unknown" | "wrong_type" | "invalid_json" | "too_deeply_nested";
  /** Where inside the value the problem is (`tags[2]`), when it is not the value itself. */
  path?: string;
  /** The declared type text (of the element at `path` when there is one). */
  expected?: string;
  received?: string;
}

type TypeNode = { text: string } & (
  | { kind: "any" | "nonNullish" | "string" | "number" | "boolean" | "null" | "undefined" | "object" }
  | { kind: "literal"; value: string | number | boolean }
  | { kind: "array"; element: TypeNode }
  | { kind: "union"; members: TypeNode[] }
);

const KEYWORDS = new Map<string, TypeNode["kind"]>([
  ["string", "string"],
  ["number", "number"],
  ["boolean", "boolean"],
  ["null", "null"],
  ["undefined", "undefined"],
  ["void", "undefined"],
  ["unknown", "any"],
  ["any", "any"],
  ["object", "object"],
]);

/**
 * Indices of the characters at bracket depth 0, outside quotes (an opening bracket or quote at
 * depth 0 is included, what it encloses is not); null when brackets or quotes do not balance.
 */
function topLevelIndices(text: string): number[] | null {
  const indices: number[] = [];
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (depth === 0) indices.push(i);
    if (c === '"' || c === "'" || c === "`") {
      let j = i + 1;
      while (j < text.length && text[j] !== c) j += text[j] === "\\" ? 2 : 1;
      if (j >= text.length) return null;
      i = j;
    } else if ("([{<".includes(c)) {
      depth++;
    } else if (")]}>".includes(c) && !(c === ">" && text[i - 1] === "=")) {
      if (--depth < 0) return null;
    }
  }
  return depth === 0 ? indices : null;
}

function splitAt(text: string, indices: number[]): string[] {
  const parts: string[] = [];
  let start = 0;
  for (const i of indices) {
    parts.push(text.slice(start, i).trim());
    start = i + 1;
  }
  parts.push(text.slice(start).trim());
  return parts;
}

const ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", b: "\b", f: "\f", v: "\v", "0": "\0" };

function unescapeLiteral(body: string): string {
  return body.replace(/\\(u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|[\s\S])/g, (_, e: string) => {
    if (e.startsWith("u{")) return String.fromCodePoint(parseInt(e.slice(2, -1), 16));
    if (e.length > 1) return String.fromCharCode(parseInt(e.slice(1), 16));
    return Object.hasOwn(ESCAPES, e) ? (ESCAPES[e] as string) : e;
  });
}

const DECIMAL_TYPE = /^-?(\d[\d_]*(\.[\d_]*)?|\.\d[\d_]*)([eE][+-]?\d+)?$/;
const RADIX_TYPE = /^-?0([xX][\da-fA-F_]+|[oO][0-7_]+|[bB][01_]+)$/;

function numberLiteral(text: string): number | undefined {
  if (!DECIMAL_TYPE.test(text) && !RADIX_TYPE.test(text)) return undefined;
  const negative = text.startsWith("-");
  const value = Number(text.slice(negative ? 1 : 0).replace(/_/g, ""));
  if (!Number.isFinite(value)) return undefined;
  return negative ? -value : value;
}

function parseGeneric(name: string, argsText: string, text: string, depth: number): TypeNode {
  const top = topLevelIndices(argsText);
  if (!top) return { kind: "any", text };
  const args = splitAt(argsText, top.filter((i) => argsText[i] === ","));
  const [first] = args;
  if ((name === "Array" || name === "ReadonlyArray") && args.length === 1 && first !== undefined) {
    return { kind: "array", text, element: parseType(first, depth + 1) };
  }
  if (name === "Readonly" && args.length === 1 && first !== undefined) return parseType(first, depth + 1);
  if (name === "Record") return { kind: "object", text };
  return { kind: "any", text };
}

/** Reads declared type text into the small model the checker understands. */
function parseType(raw: string, depth = 0): TypeNode {
  const text = raw.trim();
  const any: TypeNode = { kind: "any", text };
  if (depth > MAX_PARSE_DEPTH || text === "") return any;
  const top = topLevelIndices(text);
  if (!top) return any;
  const at = (c: string) => top.filter((i) => text[i] === c);
  // Function types (`=>`) and conditional types (`?`) are not modelled.
  if (top.some((i) => text[i] === "=" && text[i + 1] === ">") || at("?").length > 0) return any;
  const bars = at("|");
  if (bars.length > 0) {
    const parts = splitAt(text, bars);
    if (parts[0] === "") parts.shift(); // a leading `|`
    if (parts.some((p) => p === "")) return any;
    if (parts.length === 1) return parseType(parts[0] as string, depth + 1);
    return { kind: "union", text, members: parts.map((p) => parseType(p, depth + 1)) };
  }
  if (at("&").length > 0) return any; // intersections are not modelled
  const readonly = /^readonly\s+/.exec(text);
  if (readonly) return parseType(text.slice(readonly[0].length), depth + 1);
  if (/^(keyof|typeof|unique|infer|asserts)\s/.test(text)) return any;
  if (text.endsWith("[]")) return { kind: "array", text, element: parseType(text.slice(0, -2), depth + 1) };
  if (top.length === 1) {
    // The whole text is one bracketed group or one quoted literal.
    const open = text[0];
    const inner = text.slice(1, -1);
    if (open === "(") return parseType(inner, depth + 1);
    if (open === "{") return { kind: inner.trim() === "" ? "nonNullish" : "object", text };
    if (open === "[") return { kind: "array", text, element: { kind: "any", text: "unknown" } };
    if (open === '"' || open === "'") return { kind: "literal", text, value: unescapeLiteral(inner) };
    if (open === "`") return { kind: "string", text };
  }
  if (text === "true" || text === "false") return { kind: "literal", text, value: text === "true" };
  const number = numberLiteral(text);
  if (number !== undefined) return { kind: "literal", text, value: number };
  const keyword = KEYWORDS.get(text);
  if (keyword) return { kind: keyword, text } as TypeNode;
  const generic = /^([A-Za-z_$][\w$]*)\s*</.exec(text);
  if (generic && text.endsWith(">") && top.length === generic[0].length) {
    return parseGeneric(generic[1] as string, text.slice(generic[0].length, -1), text, depth);
  }
  return any;
}

function membersOf(node: TypeNode): TypeNode[] {
  return node.kind === "union" ? node.members.flatMap(membersOf) : [node];
}

function hasLiteral(node: TypeNode): boolean {
  return membersOf(node).some((m) => m.kind === "literal");
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
    else result[name] = outcome.value;
  }
  for (const name of Object.keys(input)) {
    if (!declared.has(name)) problems.push({ name, problem: "unknown" });
  }
  if (problems.length > 0) {
    const message = `Invalid parameters: ${problems.map(describeProblem).join("; ")}`;
    throw new ApiError("invalid_parameters", message, { parameters: problems });
  }
  return Object.fromEntries(Object.entries(result));
}
