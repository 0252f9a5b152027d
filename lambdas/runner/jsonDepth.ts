/**
 * How deeply JSON nests, counted without recursion (no dependencies: the worker bundle has
 * this too). Text is scanned once: each `[` or `{` outside a string opens a level, each `]` or
 * `}` closes one; a string is skipped with `indexOf` (native, so the megabytes of text a result
 * may carry cost next to nothing on the thread that serves requests), then the backslashes in
 * front of its closing quote are counted (each character once at most). The scan stops as soon
 * as `limit` is passed, so its cost is at most the text's length whatever the nesting.
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
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      const end = closingQuote(text, i);
      // An unterminated string runs to the end: nothing after it nests.
      if (end === -1) return false;
      i = end;
    } else if (code === OPEN_ARRAY || code === OPEN_OBJECT) {
      if (++depth > limit) return true;
    } else if (code === CLOSE_ARRAY || code === CLOSE_OBJECT) {
      depth--;
    }
  }
  return false;
}

/** Where the string opened at `open` ends (its closing quote), or -1. */
function closingQuote(text: string, open: number): number {
  for (let quote = text.indexOf('"', open + 1); quote !== -1; quote = text.indexOf('"', quote + 1)) {
    // Escaped when an odd number of backslashes stand right before it.
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote;
  }
  return -1;
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
