import { MAX_CODE_BYTES } from "../../lambdas/code/extractParameters";

// Modules a hostile account deploys to stall the service (issue #26, items 1 and 9): each is
// valid TypeScript that parses, and each cost the service seconds to minutes, or a 500.

/** `export default async (<params>) => 1` with as many `param(i)` as fit in `bytes` (at most MAX_CODE_BYTES). */
function manyParameters(param: (i: number) => string, bytes = MAX_CODE_BYTES): string {
  const head = "export default async (";
  const tail = ") => 1;";
  const params: string[] = [];
  let size = head.length + tail.length;
  for (let i = 0; size + param(i).length + 2 <= bytes; i++) {
    params.push(param(i));
    size += param(i).length + 2;
  }
  return head + params.join(", ") + tail;
}

/** `count` parameters typed `[]` (an empty tuple: its schema is several keys long). */
export function emptyTupleParameters(count: number): string {
  return `export default async (${Array.from({ length: count }, (_, i) => `p${i}: []`).join(", ")}) => 1;`;
}

/** Parameters typed `[]` up to the code size limit (≈ 25,000 of them). */
export const EMPTY_TUPLES_AT_LIMIT = (): string => manyParameters((i) => `p${i}: []`);

/** Parameters typed `string` up to the code size limit (≈ 18,000 of them). */
export const STRINGS_AT_LIMIT = (): string => manyParameters((i) => `p${i}: string`);

/** `Record<100 literal keys, …>` four levels deep: 2.5 KB of code, 10^8 leaves once written out. */
export function nestedRecords(): string {
  const keys = Array.from({ length: 100 }, (_, i) => `"k${i}"`).join("|");
  return [
    `type A = Record<${keys}, string>;`,
    `type B = Record<${keys}, A>;`,
    `type C = Record<${keys}, B>;`,
    `type D = Record<${keys}, C>;`,
    "export default async (x: D) => 1;",
  ].join("\n");
}

/** Code nested too deeply for the parser, in the four forms of issue #26 item 9. */
export const TOO_DEEP: Record<string, () => string> = {
  "255 KB of nested parentheses": () => {
    const n = Math.floor((MAX_CODE_BYTES - 40) / 2);
    return `export default async () => ${"(".repeat(n)}1${")".repeat(n)};`;
  },
  "generics 37,000 levels deep": () => `type A<T> = T;\nexport default async (x: ${"A<".repeat(37_000)}string${">".repeat(37_000)}) => 1;`,
  "an object type 65,000 levels deep": () => `export default async (x: ${"{a:".repeat(65_000)}string${"}".repeat(65_000)}) => 1;`,
  "a default literal 65,000 levels deep": () => `export default async (x = ${"[".repeat(65_000)}${"]".repeat(65_000)}) => 1;`,
};

/**
 * A module the TypeScript parser needs a minute or more for: `a<b<b<…` makes it try, at each `<`,
 * to read what follows as type arguments first (a quadratic back-and-forth; 500 deep is shallow
 * enough for a main thread's stack); 150 such statements, 180 KB. It deploys (it is valid code),
 * so only a time budget stops it.
 */
export function slowToParse(statements = 150, depth = 500): string {
  const lines = Array.from({ length: statements }, (_, i) => `const x${i} = a${"<b".repeat(depth)};`);
  return `declare const a: number, b: number;\n${lines.join("\n")}\nexport default async (n: number) => n;`;
}
