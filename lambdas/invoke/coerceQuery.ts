import { acceptsAnything, unionMembers, type JsonSchema } from "../code/jsonSchema";

/** Decimal text: `12`, `-0.5`, `1e3`, `.5`, `1.` (not `0x1f`, `+1`, `Infinity` or blanks). */
const QUERY_NUMBER = /^-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

type Kind = "number" | "boolean" | "null" | "array" | "object" | "string" | "any" | "undefined";

export type Coerced = { ok: true; value: unknown } | { ok: false; problem: "wrong_type" | "invalid_json" };

/** What kinds of value a schema takes, union members flattened. */
function kindsOf(schema: JsonSchema): Set<Kind> {
  const kinds = new Set<Kind>();
  for (const member of unionMembers(schema)) {
    const values = member.enum ?? (member.const !== undefined ? [member.const] : undefined);
    if (values) {
      for (const value of values) kinds.add(value === null ? "null" : (typeof value as Kind));
    } else if (member.not) {
      kinds.add(Object.keys(member.not).length === 0 ? "undefined" : "any");
    } else if (typeof member.type === "string") {
      kinds.add(member.type === "integer" ? "number" : member.type);
    } else if (acceptsAnything(member) || member.type === undefined) {
      kinds.add("any");
    }
  }
  return kinds;
}

function parseJson(text: string): Coerced {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, problem: "invalid_json" };
  }
}

/**
 * Turns a query string into a value of the parameter's schema. The kinds the schema takes are
 * tried in this order: number (decimal text), boolean (`true`/`false`), null (`null`), JSON text
 * for arrays and objects, then the text as it is when it takes strings; a schema that takes any
 * value reads JSON text and falls back to the raw string. The value is checked afterwards.
 */
export function coerceQuery(schema: JsonSchema, raw: string): Coerced {
  const kinds = kindsOf(schema);
  if (kinds.has("number") && QUERY_NUMBER.test(raw)) return { ok: true, value: Number(raw) };
  if (kinds.has("boolean") && (raw === "true" || raw === "false")) return { ok: true, value: raw === "true" };
  if (kinds.has("null") && raw === "null") return { ok: true, value: null };
  let jsonFailed = false;
  if (kinds.has("array") || kinds.has("object")) {
    const parsed = parseJson(raw);
    if (parsed.ok && typeof parsed.value === "object" && parsed.value !== null) return parsed;
    jsonFailed = !parsed.ok;
  }
  if (kinds.has("string")) return { ok: true, value: raw };
  if (kinds.has("any")) {
    const parsed = parseJson(raw);
    return parsed.ok ? parsed : { ok: true, value: raw };
  }
  // Only JSON-text kinds (null is JSON too): malformed JSON is the clearer report.
  const allJson = [...kinds].every((kind) => ["array", "object", "null", "undefined"].includes(kind));
  return { ok: false, problem: jsonFailed && allJson ? "invalid_json" : "wrong_type" };
}
