import fc from "fast-check";

/** Keys that reach Object.prototype when code assigns them carelessly. */
export const PROTO_KEYS = ["__proto__", "constructor", "prototype", "toString", "valueOf", "hasOwnProperty"];

/** Strings of every awkward kind: empty, unicode, lone surrogates, path separators, very long. */
export const oddString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.string({ unit: "binary", maxLength: 20 }),
  fc.constantFrom("", " ", "..", "../..", "/", "a/b", "a\\b", "%2F", "%00", "\u0000", "\ud800", "é", "🦀", "\u202e", "null", "NaN", "-1", "0", "1e309", ...PROTO_KEYS),
  fc.integer({ min: 64, max: 3000 }).map((n) => "a".repeat(n)),
  fc.integer({ min: 1, max: 1500 }).map((n) => "é".repeat(n)),
);

/** Numbers JSON can carry, including those a store cannot keep exactly. */
const oddNumber = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -0, 9007199254740991, 2 ** 53 + 2, 1e300, -1e300, 5e-324, 1e-131, 1e-130),
);

/** Any JSON value, with prototype keys among its object keys. */
export const oddJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    oddNumber,
    oddString,
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(fc.oneof(oddString, fc.constantFrom(...PROTO_KEYS)), tie("value"), { maxKeys: 4 }),
  ),
})).value;

/** JSON text nested `depth` levels deep, in arrays or objects. */
export const deepJsonText = fc
  .tuple(fc.oneof({ weight: 9, arbitrary: fc.integer({ min: 1, max: 3000 }) }, { weight: 1, arbitrary: fc.constantFrom(50_000, 500_000) }), fc.boolean())
  .map(([depth, arrays]) => (arrays ? `${"[".repeat(depth)}${"]".repeat(depth)}` : `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`));

/** Text that is not JSON, or JSON broken in the usual ways. */
export const badJsonText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom("{", '{"a":}', "[1,]", "{'a':1}", "NaN", '{"a":1}x', "\u0000", "\ufeff{}", '{"a":"\\ud800"}', '{"a":1,"a":2}', "{}{}", " "),
  oddJson.map((value) => (JSON.stringify(value) ?? "null").slice(0, -1)),
);

/** Mostly a valid value, sometimes an edge case, now and then anything at all. */
export function mostly<T>(valid: fc.Arbitrary<T>, edge: fc.Arbitrary<unknown>, odd: fc.Arbitrary<unknown> = oddJson): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: 8, arbitrary: valid }, { weight: 1, arbitrary: edge }, { weight: 1, arbitrary: odd });
}

/**
 * A JSON object as text, from known fields (each present half of the time; `required` ones
 * nearly always) and, in one object of eight, stray keys (prototype keys included).
 */
export function objectText(fields: Record<string, fc.Arbitrary<unknown>>, required: readonly string[] = []): fc.Arbitrary<string> {
  const known = Object.entries(fields).map(([key, value]) =>
    fc.oneof(
      { weight: required.includes(key) ? 15 : 1, arbitrary: value.map((v) => [key, v] as const) },
      { weight: 1, arbitrary: fc.constant(undefined) },
    ),
  );
  const stray = fc.array(fc.tuple(fc.oneof(oddString, fc.constantFrom(...PROTO_KEYS)), oddJson), { minLength: 1, maxLength: 2 });
  return fc
    .tuple(fc.tuple(...known), fc.oneof({ weight: 7, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: stray }))
    .map(([pairs, extras]) => {
      const entries = [...pairs.filter((p) => p !== undefined), ...(extras ?? [])];
      return `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value) ?? "null"}`).join(",")}}`;
    });
}

/** A request body: mostly an object of `fields`, sometimes any JSON, broken JSON or deep nesting. */
export function bodyText(fields: Record<string, fc.Arbitrary<unknown>>, required: readonly string[] = []): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 16, arbitrary: objectText(fields, required) },
    { weight: 1, arbitrary: oddJson.map((value) => JSON.stringify(value) ?? "null") },
    { weight: 1, arbitrary: badJsonText },
    { weight: 1, arbitrary: deepJsonText },
  );
}

/** A path segment, percent-encoded; a lone surrogate becomes its three bytes (not UTF-8). */
export function segment(text: string): string {
  return Array.from(text)
    .map((char) => {
      try {
        return encodeURIComponent(char);
      } catch {
        const c = char.charCodeAt(0);
        return [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join("");
      }
    })
    .join("");
}

/** Header values fetch can send: printable latin-1, no CR, LF or NUL. */
export const headerText: fc.Arbitrary<string> = fc
  .array(fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0xa0, max: 0xff })), { maxLength: 60 })
  .map((codes) => String.fromCharCode(...codes).trim());
