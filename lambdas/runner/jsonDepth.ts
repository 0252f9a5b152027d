/**
 * How deeply JSON nests, counted without recursion (no dependencies: the worker bundle has
 * this too). Text is scanned once, byte by byte: each `[` or `{` outside a string opens a
 * level, each `]` or `}` closes one; the scan stops as soon as `limit` is passed, so its cost
 * is at most the text's length whatever the nesting.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/**
 * True when JSON text nests arrays and objects more than `limit` levels deep (`1` is 0 levels,
 * `[]` one, `{"a":[1]}` two). Text that is not JSON is measured the same way (its parser then
 * refuses it).
 */
export function jsonTextDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === BACKSLASH) i++;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) {
      inString = true;
    } else if (code === OPEN_ARRAY || code === OPEN_OBJECT) {
      if (++depth > limit) return true;
    } else if (code === CLOSE_ARRAY || code === CLOSE_OBJECT) {
      depth--;
    }
  }
  return false;
}

/**
 * True when a value nests arrays and objects more than `limit` levels deep, walked with a
 * stack of its own (never the call stack), each object once. For values parsed from JSON
 * (the answer of a Lambda, a frame): own enumerable properties and array items only.
 */
export function valueDeeperThan(value: unknown, limit: number): boolean {
  const pending: [unknown, number][] = [[value, 0]];
  const seen = new Set<object>();
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next;
    if (typeof item !== "object" || item === null || seen.has(item)) continue;
    if (depth + 1 > limit) return true;
    seen.add(item);
    const children: unknown[] = Array.isArray(item) ? item : Object.values(item);
    for (const child of children) if (typeof child === "object" && child !== null) pending.push([child, depth + 1]);
  }
  return false;
}
