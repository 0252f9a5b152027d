import type { ApiError } from "../../lambdas/http/errors";
import { thrownApiError } from "../helpers/apiErrors";
import { extractParameters, MAX_CODE_BYTES } from "../../lambdas/code/extractParameters";

/** Runs extractParameters expecting an invalid_code rejection; returns the error. */
function rejection(source: string): ApiError {
  const apiError = thrownApiError(() => extractParameters(source), "expected extractParameters to throw");
  expect(apiError.code).toBe("invalid_code");
  expect(apiError.status).toBe(400);
  return apiError;
}

/** The default of a single positional parameter `x = <expr>`. */
function defaultOf(expr: string): string | undefined {
  const [param] = extractParameters(`export default async function run(x = ${expr}) {}`);
  return param?.default;
}

describe("extractParameters: positional parameters", () => {
  it("reads names, declared types, defaults and optionality in order", () => {
    const source = `
      export default async function run(url: string, max_items: number = 10, opt?: boolean) {
        return url;
      }`;
    expect(extractParameters(source)).toEqual([
      { name: "url", type: "string", required: true },
      { name: "max_items", type: "number", default: "10", required: false },
      { name: "opt", type: "boolean", required: false },
    ]);
  });

  it("keeps complex types as written, with whitespace collapsed", () => {
    const source = `export default async function (tags: string[], box: {
        a:   number },
      mode: "a" | "b") {}`;
    expect(extractParameters(source).map((p) => p.type)).toEqual(["string[]", "{ a: number }", '"a" | "b"']);
  });

  it("treats a union with undefined, and void, as optional", () => {
    const source = `export default async (a: string | undefined, b: (number | undefined), c: string | null, d: void) => {}`;
    expect(extractParameters(source).map((p) => [p.name, p.type, p.required])).toEqual([
      ["a", "string | undefined", false],
      ["b", "(number | undefined)", false],
      ["c", "string | null", true],
      ["d", "void", false],
    ]);
  });

  it("handles untyped JavaScript", () => {
    expect(extractParameters("export default async function (url, n = 3) {}")).toEqual([
      { name: "url", type: "unknown", required: true },
      { name: "n", type: "number", default: "3", required: false },
    ]);
  });

  it("infers simple types from literal defaults", () => {
    const source = `export default function (a = "x", b = true, c = -2, d = [1], e = null, f = {}) {}`;
    expect(extractParameters(source).map((p) => p.type)).toEqual([
      "string",
      "boolean",
      "number",
      "unknown[]",
      "unknown",
      "unknown",
    ]);
  });

  it("returns [] for a function without parameters", () => {
    expect(extractParameters("export default async function run() {}")).toEqual([]);
  });

  it("ignores a TypeScript this parameter", () => {
    expect(extractParameters("export default function (this: unknown, a: string) {}")).toEqual([
      { name: "a", type: "string", required: true },
    ]);
  });
});

describe("extractParameters: default values", () => {
  it.each([
    ["10", "10"],
    ["-1", "-1"],
    ["1.5e3", "1500"],
    ["0x10", "16"],
    ["1_000", "1000"],
    ["'single'", '"single"'],
    ['"double"', '"double"'],
    ["`backtick`", '"backtick"'],
    ["'it\\'s \\n'", '"it\'s \\n"'],
    ["true", "true"],
    ["false", "false"],
    ["null", "null"],
    ["[1, 'a', [true, null]]", '[1,"a",[true,null]]'],
    ["{ a: 1, 'b-c': { d: [-2, `e`] }, 3: null }", '{"3":null,"a":1,"b-c":{"d":[-2,"e"]}}'],
    ["['x', 'y'] as const", '["x","y"]'],
  ])("%s → %s", (expr, json) => {
    expect(defaultOf(expr)).toBe(json);
  });

  it.each(["Date.now()", "undefined", "someConstant", "`a${1}`", "10n", "{ ...{} }", "[1, , 2]", "Infinity"])(
    "%s is optional without a reported default",
    (expr) => {
      const [param] = extractParameters(`export default async function run(x = ${expr}) {}`);
      expect(param).toBeDefined();
      expect(param?.required).toBe(false);
      expect(param).not.toHaveProperty("default");
    },
  );
});

describe("extractParameters: destructured object parameter", () => {
  it("reads each binding with its type from the type literal", () => {
    const source = `
      export default async function run(
        { url, max_items = 10, label, tags }:
        { url: string; max_items?: number; label?: string; tags: string[] | undefined },
      ) {}`;
    expect(extractParameters(source)).toEqual([
      { name: "url", type: "string", required: true },
      { name: "max_items", type: "number", default: "10", required: false },
      { name: "label", type: "string", required: false },
      { name: "tags", type: "string[] | undefined", required: false },
    ]);
  });

  it("names a renamed binding after its property", () => {
    const source = `export default async ({ a: b, "max-items": m = 5 }: { a: boolean; "max-items"?: number }) => b`;
    expect(extractParameters(source)).toEqual([
      { name: "a", type: "boolean", required: true },
      { name: "max-items", type: "number", default: "5", required: false },
    ]);
  });

  it("works without a type annotation, inferring from defaults", () => {
    expect(extractParameters("export default async ({ url, n = 2 }) => {}")).toEqual([
      { name: "url", type: "unknown", required: true },
      { name: "n", type: "number", default: "2", required: false },
    ]);
  });

  it("follows a local type alias or interface", () => {
    const source = `
      interface Input { url: string; depth?: number }
      export default async function ({ url, depth }: Input) {}`;
    expect(extractParameters(source)).toEqual([
      { name: "url", type: "string", required: true },
      { name: "depth", type: "number", required: false },
    ]);
  });

  it("follows local interfaces that extend local interfaces, on several levels", () => {
    const source = `
      interface Base { url?: string }
      interface Mid extends Base { depth: number }
      interface Opts extends Mid { n?: number; mode: "a" | "b" }
      export default async ({ url, depth, n, mode }: Opts) => {}`;
    expect(extractParameters(source)).toEqual([
      { name: "url", type: "string", required: false },
      { name: "depth", type: "number", required: true },
      { name: "n", type: "number", required: false },
      { name: "mode", type: '"a" | "b"', required: true },
    ]);
  });

  it("follows intersections of type literals and local aliases; a member required in one part is required", () => {
    const source = `
      type Extra = { n?: number };
      type Opts = { url: string } & Extra & ({ flag?: boolean } & { label?: string }) & { label: string };
      export default async ({ url, n, flag, label }: Opts) => {}`;
    expect(extractParameters(source)).toEqual([
      { name: "url", type: "string", required: true },
      { name: "n", type: "number", required: false },
      { name: "flag", type: "boolean", required: false },
      { name: "label", type: "string", required: true },
    ]);
  });

  it("makes every property optional under Partial, required under Required, and keeps them under Readonly", () => {
    const prelude = `interface Base { url: string } interface Opts extends Base { n?: number }`;
    const of = (type: string) =>
      extractParameters(`${prelude}\nexport default async ({ url, n }: ${type}) => {}`).map((p) => [p.name, p.type, p.required]);
    expect(of("Partial<Opts>")).toEqual([["url", "string", false], ["n", "number", false]]);
    expect(of("Required<Opts>")).toEqual([["url", "string", true], ["n", "number", true]]);
    expect(of("Readonly<{ url: string; n?: number }>")).toEqual([["url", "string", true], ["n", "number", false]]);
    expect(of("Readonly<Partial<Opts>> & { url: string }")).toEqual([["url", "string", true], ["n", "number", false]]);
    expect(of("Required<Partial<Opts>>")).toEqual([["url", "string", true], ["n", "number", true]]);
  });

  it("never requires a property that has a default", () => {
    const source = `export default async ({ mode = "a", n = 2 }: Required<{ mode: "a" | "b"; n?: number }>) => {}`;
    expect(extractParameters(source)).toEqual([
      { name: "mode", type: '"a" | "b"', default: '"a"', required: false },
      { name: "n", type: "number", default: "2", required: false },
    ]);
  });

  it("keeps properties of a type it cannot follow unknown and required, unless the type makes them optional", () => {
    const prelude = `import type { Options } from "./options";\ninterface Mine extends Options { n?: number }`;
    const of = (type: string) =>
      extractParameters(`${prelude}\nexport default async ({ url, n }: ${type}) => {}`).map((p) => [p.name, p.type, p.required]);
    expect(of("Options")).toEqual([["url", "unknown", true], ["n", "unknown", true]]);
    expect(of("Mine")).toEqual([["url", "unknown", true], ["n", "number", false]]);
    expect(of("Partial<Options>")).toEqual([["url", "unknown", false], ["n", "unknown", false]]);
    expect(of("Partial<Options> & { url: string }")).toEqual([["url", "string", true], ["n", "unknown", false]]);
    expect(of("Options & { n?: number }")).toEqual([["url", "unknown", true], ["n", "number", false]]);
  });

  it("resolves a type used many times once, and gives up on types too large to resolve", () => {
    const levels = Array.from({ length: 30 }, (_, i) => `type T${i + 1} = T${i} & T${i} & T${i} & T${i};`).join("\n");
    const nested = `type T0 = { a?: string };\n${levels}\nexport default async ({ a }: T30) => {}`;
    expect(extractParameters(nested)).toEqual([{ name: "a", type: "string", required: false }]);
    const members = Array.from({ length: 1000 }, (_, i) => `a${i}?: string`).join("; ");
    const large = `type A = { ${members} };\ntype B = ${Array(30).fill("A").join(" & ")};\nexport default async ({ a1 }: B) => {}`;
    expect(extractParameters(large)).toEqual([{ name: "a1", type: "unknown", required: true }]);
  });

  it("makes every property optional when the whole object has a default", () => {
    const source = "export default async ({ url }: { url: string } = { url: 'x' }) => {}";
    expect(extractParameters(source)).toEqual([{ name: "url", type: "string", required: false }]);
  });
});

describe("extractParameters: forms of default export", () => {
  const expected = [{ name: "a", type: "string", required: true }];

  it.each([
    ["async function declaration", "export default async function run(a: string) {}"],
    ["anonymous function", "export default function (a: string) {}"],
    ["arrow function", "export default async (a: string) => {}"],
    ["parenthesized arrow", "export default (async (a: string) => {});"],
    ["identifier → const arrow", "const run = async (a: string) => {};\nexport default run;"],
    ["identifier → function", "async function run(a: string) {}\nexport default run;"],
    ["export { run as default }", "async function run(a: string) {}\nexport { run as default };"],
  ])("%s", (_label, source) => {
    expect(extractParameters(source)).toEqual(expected);
  });
});

describe("extractParameters: rejections", () => {
  it("reports a syntax error with its 1-based line and column", () => {
    const error = rejection("export default async function run() {\n  const a = 1\n  let b = ;\n}\n");
    expect(error.message).toBe("Syntax error at line 3:11: Expression expected.");
    expect(error.details).toEqual({ line: 3, column: 11 });
  });

  it("reports a missing semicolon-style error", () => {
    const error = rejection("export default async function run() {\n  return 1 2;\n}");
    expect(error.message).toBe("Syntax error at line 2:12: ';' expected.");
  });

  it("rejects a module without a default export", () => {
    expect(rejection("export async function run() {}").message).toBe(
      "The module has no default export; export an async function as default",
    );
  });

  it("rejects a default export that is a number", () => {
    expect(rejection("export default 42;").message).toBe(
      "The default export is a number (`42`), not a function; export an async function as default",
    );
  });

  it("rejects a default export that is an object literal", () => {
    expect(rejection("export default { run() {} };").message).toBe(
      "The default export is an object literal, not a function; export an async function as default",
    );
  });

  it("rejects a default export that is a class", () => {
    expect(rejection("export default class Run {}").message).toBe(
      "The default export is a class, not a function; export an async function as default",
    );
    expect(rejection("class Run {}\nexport default Run;").message).toBe(
      "The default export `Run` is a class, not a function; export an async function as default",
    );
  });

  it("rejects an identifier that is not a top-level const function", () => {
    expect(rejection("let run = async () => {};\nexport default run;").message).toBe(
      "The default export `run` must be declared with const, not let or var",
    );
    expect(rejection("export default run;").message).toBe(
      "The default export `run` is not declared at the top level of the module",
    );
  });

  it("rejects a rest parameter, naming it", () => {
    expect(rejection("export default async function run(url: string, ...args: string[]) {}").message).toBe(
      "Parameter `...args` is a rest parameter; declare each parameter by name",
    );
  });

  it("rejects array destructuring", () => {
    expect(rejection("export default async ([a, b]: string[]) => {}").message).toBe(
      "Parameter 1 uses array destructuring; use named parameters or one destructured object",
    );
  });

  it("rejects a destructured object mixed with other parameters", () => {
    expect(rejection("export default async ({ a }: { a: string }, b: number) => {}").message).toBe(
      "Parameter 1 is a destructured object among 2 parameters; a destructured object must be the only parameter",
    );
  });

  it("rejects nested destructuring and object rest", () => {
    expect(rejection("export default async ({ a: { b } }: { a: { b: string } }) => {}").message).toBe(
      "The destructured property `a` is itself destructured; nested patterns are not supported",
    );
    expect(rejection("export default async ({ a, ...more }) => {}").message).toBe(
      "The destructured parameter has a rest element `...more`; list each property instead",
    );
  });

  it("rejects code over 256 KB, counting UTF-8 bytes, before parsing", () => {
    const filler = "é".repeat(MAX_CODE_BYTES / 2); // 2 bytes each: exactly at the limit
    // Exactly at the limit: parsed (an identifier statement), so rejected for the missing default export.
    expect(rejection(filler).message).toBe("The module has no default export; export an async function as default");
    const source = `export default async () => {};\n// ${filler}`;
    const bytes = Buffer.byteLength(source, "utf8");
    const error = rejection(source);
    expect(error.message).toBe(`Code is ${bytes} bytes; the limit is 262144`);
    expect(error.details).toEqual({ bytes, limit: 262144 });
  });
});
