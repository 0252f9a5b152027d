/**
 * What a JSON value kept in a DynamoDB item (a function's `schedule_params`) must satisfy to be
 * stored exactly: the document client refuses numbers beyond
 * ±Number.MAX_SAFE_INTEGER (it would lose precision), DynamoDB refuses non-zero numbers
 * smaller than 1e-130 in magnitude and maps nested more than 32 levels, and an object with an
 * own key `__proto__` or `constructor` does not survive the conversion to an attribute map
 * (the client takes the latter for a class instance and throws).
 */

/** Object keys the document client cannot convert. */
const UNSTORABLE_KEYS = new Set(["__proto__", "constructor"]);

/** Nesting levels a stored value may have below its attribute (DynamoDB allows 32 in an item). */
export const MAX_STORED_DEPTH = 30;
/**
 * The JSON text of a function's `schedule_params` at most: 32 KB (they are kept in the
 * function record, a DynamoDB item of at most 400 KB).
 */
export const MAX_SCHEDULE_PARAMS_BYTES = 32_768;
/**
 * The JSON text of an invocation's parameters at most: 240 KB. A run keeps them as text (in
 * part items when large); the bound is what an asynchronous Lambda invocation can carry (its
 * event is at most 256 KB, and holds the parameters with a small envelope), so a function
 * takes the same parameters locally and on AWS.
 */
export const MAX_INVOKE_PARAMS_BYTES = 245_760;

export interface StorableProblem {
  /** Where in the value, e.g. `tags[2]` or `options.limit`; `` for the value itself. */
  path: string;
  reason: string;
}

/**
 * How a value is kept: `item` as attributes of a DynamoDB item (a function's `schedule_params`),
 * where all of the rules above apply; `text` as JSON text (a run's parameters), where only
 * the nesting depth is bounded (deeper values would strain the recursion that reads and writes
 * them).
 */
export type StoredAs = "item" | "text";

/** The first part of `value` that cannot be stored exactly, or undefined when all of it can. */
export function unstorablePart(value: unknown, path = "", depth = 0, storedAs: StoredAs = "item"): StorableProblem | undefined {
  if (typeof value === "number" && storedAs === "item") {
    if (Math.abs(value) > Number.MAX_SAFE_INTEGER) return { path, reason: "numbers must lie within ±9007199254740991" };
    if (value !== 0 && Math.abs(value) < 1e-130) return { path, reason: "non-zero numbers must be at least 1e-130 in magnitude" };
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  if (depth >= MAX_STORED_DEPTH) return { path, reason: `values may be nested at most ${MAX_STORED_DEPTH} levels deep` };
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const problem = unstorablePart(value[i], `${path}[${i}]`, depth + 1, storedAs);
      if (problem) return problem;
    }
    return undefined;
  }
  for (const key of Object.keys(value)) {
    const at = path === "" ? key : `${path}.${key}`;
    if (storedAs === "item" && UNSTORABLE_KEYS.has(key)) return { path: at, reason: `'${key}' cannot be an object key` };
    const problem = unstorablePart(Object.getOwnPropertyDescriptor(value, key)?.value, at, depth + 1, storedAs);
    if (problem) return problem;
  }
  return undefined;
}

/** Bytes of `value` as JSON text. */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? "", "utf8");
}
