/**
 * A small parser of declared TypeScript type text (as `extractParameters` reports it) into the
 * few shapes the parameter checker understands; anything else becomes "any".
 */

/** Type text nested deeper than this is not modelled (it accepts anything). */
const MAX_PARSE_DEPTH = 256;

export type TypeNode = { text: string } & (
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
export function parseType(raw: string, depth = 0): TypeNode {
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

export function membersOf(node: TypeNode): TypeNode[] {
  return node.kind === "union" ? node.members.flatMap(membersOf) : [node];
}

export function hasLiteral(node: TypeNode): boolean {
  return membersOf(node).some((m) => m.kind === "literal");
}
