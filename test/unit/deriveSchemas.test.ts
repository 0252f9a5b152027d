import { compileCode } from "../../lambdas/code/compileCode";
import { MAX_SCHEMA_BYTES } from "../../lambdas/code/deriveSchemas";
import type { JsonSchema } from "../../lambdas/code/jsonSchema";

/** The input schema of a module. */
function schemaOf(source: string) {
  return compileCode(source).input_schema;
}

/** The schema of each parameter of `run(<params>)`, by name. */
function params(list: string, prelude = ""): Record<string, JsonSchema> {
  return schemaOf(`${prelude}\nexport default async function run(${list}) {}`).properties;
}

/** The notes of each parameter that has one. */
function notes(source: string): Record<string, string> {
  return Object.fromEntries(compileCode(source).variables.flatMap((v) => (v.schema_note ? [[v.name, v.schema_note]] : [])));
}

describe("deriveSchemas: the whole schema", () => {
  it("is a closed draft 2020-12 object schema over the call parameters, required ones listed in order", () => {
    expect(schemaOf(`export default async function run(url: string, max_items: number = 10, tags?: string[]) {}`)).toEqual({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: {
        url: { type: "string" },
        max_items: { type: "number", default: 10 },
        tags: { type: "array", items: { type: "string" } },
      },
      required: ["url"],
      additionalProperties: false,
    });
  });

  it("is the same for one destructured object (its properties are the parameters)", () => {
    const source = `export default async function run({ url, max_items = 10, tags }: { url: string; max_items?: number; tags?: string[] }) {}`;
    expect(schemaOf(source)).toEqual(
      schemaOf(`export default async function run(url: string, max_items: number = 10, tags?: string[]) {}`),
    );
  });

  it("has no properties for a function without parameters", () => {
    expect(schemaOf("export default async () => 1;")).toMatchObject({ properties: {}, required: [], additionalProperties: false });
  });

  it("requires no property of a destructured object that may be omitted as a whole", () => {
    expect(schemaOf(`export default async ({ a, b }: { a: string; b: number } = { a: "x", b: 1 }) => {}`).required).toEqual([]);
  });
});

describe("deriveSchemas: type forms", () => {
  it("maps primitives, integers and literal defaults", () => {
    expect(params(`s: string, n: number, b: boolean, o: object, x = "a", y = 2, z = false, l = [1]`)).toEqual({
      s: { type: "string" },
      n: { type: "number" },
      b: { type: "boolean" },
      o: { type: "object" },
      x: { type: "string", default: "a" },
      y: { type: "number", default: 2 },
      z: { type: "boolean", default: false },
      l: { type: "array", default: [1] },
    });
  });

  it("makes numbers integers with a JSDoc @integer or @type {integer} hint", () => {
    const source = `
      interface Page {
        /** Page size. @integer */
        size: number;
        /** @type {integer} */
        offsets: number[];
        ratio: number;
      }
      /** @param {integer} count how many */
      export default async function run(count: number, /** @integer */ retries: number = 3, page?: Page) {}`;
    const { properties } = schemaOf(source);
    expect(properties.count).toEqual({ type: "integer", description: "how many" });
    expect(properties.retries).toEqual({ type: "integer", default: 3 });
    expect(properties.page).toEqual({
      type: "object",
      properties: {
        size: { type: "integer", description: "Page size." },
        offsets: { type: "array", items: { type: "integer" } },
        ratio: { type: "number" },
      },
      required: ["size", "offsets", "ratio"],
      additionalProperties: false,
    });
  });

  it("maps T[], Array<T>, ReadonlyArray<T>, readonly T[] and nested arrays", () => {
    expect(params(`a: string[], b: Array<number>, c: ReadonlyArray<boolean>, d: readonly string[], e: number[][]`)).toEqual({
      a: { type: "array", items: { type: "string" } },
      b: { type: "array", items: { type: "number" } },
      c: { type: "array", items: { type: "boolean" } },
      d: { type: "array", items: { type: "string" } },
      e: { type: "array", items: { type: "array", items: { type: "number" } } },
    });
  });

  it("maps unions of literals to enum, with null among them when the union has it", () => {
    expect(params(`mode: "fast" | "full" = "fast", level: 1 | 2 | -3, flag: true | "auto", maybe: "a" | "b" | null`)).toEqual({
      mode: { enum: ["fast", "full"], default: "fast" },
      level: { enum: [1, 2, -3] },
      flag: { enum: [true, "auto"] },
      maybe: { enum: ["a", "b", null] },
    });
  });

  it("maps unions with null and other unions", () => {
    expect(params(`a: string | null, b: number | string, c: string[] | null, d: (string | undefined), e?: boolean | null`)).toEqual({
      a: { type: ["string", "null"] },
      b: { type: ["number", "string"] },
      c: { anyOf: [{ type: "array", items: { type: "string" } }, { type: "null" }] },
      d: { type: "string" },
      e: { type: ["boolean", "null"] },
    });
  });

  it("maps object literal types as closed objects, optional members not required", () => {
    expect(params(`box: { width: number; height?: number; label: string | undefined; "x-y": boolean }`).box).toEqual({
      type: "object",
      properties: {
        width: { type: "number" },
        height: { type: "number" },
        label: { type: "string" },
        "x-y": { type: "boolean" },
      },
      required: ["width", "x-y"],
      additionalProperties: false,
    });
  });

  it("keeps objects with an index signature, and Record<string, T>, open", () => {
    expect(params(`a: { [key: string]: number }, b: Record<string, string[]>, c: Record<"x" | "y", boolean>`)).toEqual({
      a: { type: "object", properties: {}, additionalProperties: { type: "number" } },
      b: { type: "object", additionalProperties: { type: "array", items: { type: "string" } } },
      c: { type: "object", properties: { x: { type: "boolean" }, y: { type: "boolean" } }, required: ["x", "y"], additionalProperties: false },
    });
  });

  it("follows interfaces, type aliases, extends and enums declared in the same module", () => {
    const prelude = `
      type Mode = "a" | "b";
      interface Base { id: string }
      interface Filter extends Base { field: string; mode?: Mode; nested: Inner }
      type Inner = { on: boolean };
      enum Color { Red = "red", Green = "green" }
      enum Level { Low, High = 10, Higher }`;
    expect(params(`filters: Filter[], color: Color, level: Level`, prelude)).toEqual({
      filters: {
        type: "array",
        items: {
          type: "object",
          properties: {
            id: { type: "string" },
            field: { type: "string" },
            mode: { enum: ["a", "b"] },
            nested: { type: "object", properties: { on: { type: "boolean" } }, required: ["on"], additionalProperties: false },
          },
          required: ["id", "field", "nested"],
          additionalProperties: false,
        },
      },
      color: { enum: ["red", "green"] },
      level: { enum: [0, 10, 11] },
    });
  });

  it("takes the destructured parameter's types from a local interface", () => {
    const source = `
      interface Options {
        /** The page to open. */
        url: string;
        max_items?: number;
      }
      export default async function run({ url, max_items = 10 }: Options) {}`;
    expect(schemaOf(source)).toMatchObject({
      properties: { url: { type: "string", description: "The page to open." }, max_items: { type: "number", default: 10 } },
      required: ["url"],
    });
  });

  it("maps Partial<T> and Required<T> of object types: no property, or every property, required", () => {
    const prelude = `interface Opts { url: string; n?: number }`;
    const object = { type: "object", properties: { url: { type: "string" }, n: { type: "number" } }, additionalProperties: false };
    expect(params(`a: Partial<Opts>, b: Required<Opts>, c: Partial<Readonly<Opts>>, d: Required<Record<"url" | "n", string>>`, prelude)).toEqual({
      a: object,
      b: { ...object, required: ["url", "n"] },
      c: object,
      d: { type: "object", properties: { url: { type: "string" }, n: { type: "string" } }, required: ["url", "n"], additionalProperties: false },
    });
  });

  it("maps tuples with prefixItems and intersections of object types", () => {
    expect(params(`t: [string, number?], u: { a: string } & { b?: number }`)).toEqual({
      t: { type: "array", prefixItems: [{ type: "string" }, { type: "number" }], items: false, minItems: 1, maxItems: 2 },
      u: { type: "object", properties: { a: { type: "string" }, b: { type: "number" } }, required: ["a"], additionalProperties: false },
    });
  });
});

describe("deriveSchemas: a destructured object's properties", () => {
  const OPTS = `interface Opts { url: string; n?: number; mode: "a" | "b" }`;
  it.each([
    ["an interface extending local ones", `interface Base { url?: string } interface Mid extends Base { n?: number } interface T extends Mid { mode: "a" | "b" }`, "T", ["mode"]],
    ["an intersection", `type Extra = { n?: number }; type T = { url: string } & Extra & { mode: "a" | "b" }`, "T", ["url", "mode"]],
    ["Partial<T>", OPTS, "Partial<Opts>", []],
    ["Required<T>", OPTS, "Required<Opts>", ["url", "n", "mode"]],
    ["Readonly<T>", OPTS, "Readonly<Opts>", ["url", "mode"]],
    ["Partial<T> & { … }", OPTS, "Partial<Opts> & { mode: \"a\" | \"b\" }", ["mode"]],
  ])("are required as the declared type says, for %s, and described as for a positional object", (_, prelude, type, required) => {
    const destructured = compileCode(`${prelude}\nexport default async ({ url, n, mode }: ${type}) => {}`);
    const positional = schemaOf(`${prelude}\nexport default async (opts: ${type}) => {}`).properties.opts;
    expect(destructured.input_schema.required).toEqual(required);
    expect(destructured.variables.filter((v) => v.required).map((v) => v.name)).toEqual(required);
    expect(destructured.variables.map((v) => v.type)).toEqual(["string", "number", '"a" | "b"']);
    expect(destructured.input_schema.properties).toEqual(positional?.properties);
    expect(positional?.required ?? []).toEqual(required);
  });

  it("are never required when they have a default", () => {
    expect(schemaOf(`${"interface Opts { url: string; n?: number }"}\nexport default async ({ url = "u", n }: Required<Opts>) => {}`).required).toEqual(["n"]);
  });
});

describe("deriveSchemas: JSDoc descriptions", () => {
  it("reads @param text for positional parameters, and a comment before a parameter", () => {
    const source = `
      /**
       * Reads a title.
       * @param url - the page to open
       * @param max_items how many items, at most
       */
      export default async function run(url: string, max_items = 10, /** Extra labels. */ labels: string[] = []) {}`;
    expect(schemaOf(source).properties).toEqual({
      url: { type: "string", description: "the page to open" },
      max_items: { type: "number", description: "how many items, at most", default: 10 },
      labels: { type: "array", items: { type: "string" }, description: "Extra labels.", default: [] },
    });
  });

  it("reads property comments, then @param name or @param object.name for a destructured parameter", () => {
    const source = `
      /**
       * @param opts.region where to search
       * @param pages how many pages
       */
      export const run = async ({ query, region, pages = 2 }: {
        /** What to search for. */
        query: string;
        region?: string;
        pages?: number;
      }) => {};
      export default run;`;
    expect(schemaOf(source).properties).toEqual({
      query: { type: "string", description: "What to search for." },
      region: { type: "string", description: "where to search" },
      pages: { type: "number", description: "how many pages", default: 2 },
    });
  });

  it("reads a comment written on the member's line after the `{` or `;` before it", () => {
    const prelude = `type P = { /** page url */ url: string; /** @integer */ pages?: number };
      interface Q { /** The label. */ label: string }`;
    const expected = { url: { type: "string", description: "page url" }, pages: { type: "integer" } };
    expect(schemaOf(`${prelude}\nexport default async ({ url, pages }: P) => {}`).properties).toEqual(expected);
    expect(params("p: P, q: Q", prelude)).toEqual({
      p: { type: "object", properties: expected, required: ["url"], additionalProperties: false },
      q: { type: "object", properties: { label: { type: "string", description: "The label." } }, required: ["label"], additionalProperties: false },
    });
  });

  it("does not give a comment that ends the line of one member to the member on the next line", () => {
    const source = `
      type P = {
        url: string; /** @integer */
        pages?: number;
      };
      export default async (p: P) => {};`;
    expect(schemaOf(source).properties.p?.properties).toEqual({ url: { type: "string" }, pages: { type: "number" } });
  });

  it("reads only a member's last comment, once per member, however many comments and expansions there are", () => {
    // A guard against a blow-up at deploy, not a speed benchmark: each of the 10,000 comments
    // was parsed on its own for every one of the 200 expansions of A (about 35 s); the bound is
    // far above what reading the last comment once takes.
    const source = `type A = { ${"/**a*/".repeat(9_999)}/** The last. @integer */ x: number };
      type B = [${Array.from({ length: 200 }, () => "A").join(", ")}];
      export default async (p: B) => 1;`;
    const started = performance.now();
    const p = schemaOf(source).properties.p;
    expect(performance.now() - started).toBeLessThan(3000);
    const a = { type: "object", properties: { x: { type: "integer", description: "The last." } }, required: ["x"], additionalProperties: false };
    expect(p).toEqual({ type: "array", prefixItems: Array.from({ length: 200 }, () => a), items: false, minItems: 200, maxItems: 200 });
  });

  it("describes nested properties from their comments", () => {
    const source = `
      type Viewport = {
        /** CSS pixels. */
        width: number;
      };
      export default async (viewport: Viewport) => {};`;
    expect(schemaOf(source).properties.viewport?.properties?.width).toEqual({ type: "number", description: "CSS pixels." });
  });
});

describe("deriveSchemas: what cannot be expressed", () => {
  it("is {} with a schema_note naming the place and the reason", () => {
    const source = `
      import type { Page } from "puppeteer-core";
      interface Box<T> { value: T }
      interface Tree { children: Tree[] }
      export default async function run(
        a: unknown, b: any, page: Page, box: Box<string>, cb: () => void,
        m: { [K in "x"]: number }, c: string extends "a" ? 1 : 2, when: Date, tree: Tree, untyped, ok: string,
      ) {}`;
    const compiled = compileCode(source);
    const { properties } = compiled.input_schema;
    for (const name of ["a", "b", "page", "box", "cb", "m", "c", "when", "untyped"]) expect(properties[name]).toEqual({});
    expect(properties.tree).toEqual({
      type: "object",
      properties: { children: { type: "array" } },
      required: ["children"],
      additionalProperties: false,
    });
    expect(properties.ok).toEqual({ type: "string" });
    expect(notes(source)).toEqual({
      a: "a: of type `unknown`; any value is accepted",
      b: "b: of type `any`; any value is accepted",
      page: "page: `Page` is not declared in this module (imported and global types are not followed); any value is accepted",
      box: "box: the generic type `Box<string>` cannot be expressed; any value is accepted",
      cb: "cb: the function type `() => void` cannot be expressed in JSON Schema; any value is accepted",
      m: 'm: the mapped type `{ [K in "x"]: number }` cannot be expressed in JSON Schema; any value is accepted',
      c: 'c: the conditional type `string extends "a" ? 1 : 2` cannot be expressed in JSON Schema; any value is accepted',
      when: "when: `Date` is not declared in this module (imported and global types are not followed); any value is accepted",
      tree: "tree.children[]: the recursive type `Tree` is described only to its first level; any value is accepted",
      untyped: "untyped: of type `unknown`; any value is accepted",
    });
  });

  it("notes Partial<T> and Required<T> of what is not an object type once, under their parameter", () => {
    const source = `import type { Page } from "puppeteer-core";\nexport default async (a: Partial<Page>, b: Required<string>) => {};`;
    expect(compileCode(source).input_schema.properties).toEqual({ a: {}, b: {} });
    expect(notes(source)).toEqual({
      a: "a: `Page` is not declared in this module (imported and global types are not followed); any value is accepted",
      b: "b: `Required<string>` is described only for object types; any value is accepted",
    });
  });

  it("notes a nested part and keeps the rest of the parameter's schema", () => {
    const source = `
      import type { Cookie } from "puppeteer-core";
      export default async (opts: { url: string; cookies?: Cookie[] }) => {};`;
    expect(compileCode(source).input_schema.properties.opts).toEqual({
      type: "object",
      properties: { url: { type: "string" }, cookies: { type: "array" } },
      required: ["url"],
      additionalProperties: false,
    });
    expect(notes(source).opts).toMatch(/^opts\.cookies\[\]: `Cookie` is not declared in this module/);
  });

  it("notes every property of a destructured parameter whose type is imported", () => {
    const source = `import type { Options } from "./options"; export default async ({ url, n = 2 }: Options) => {};`;
    expect(compileCode(source).input_schema.properties).toEqual({ url: {}, n: { default: 2 } });
    expect(notes(source)).toEqual({
      url: "url: `Options` is not declared in this module (imported and global types are not followed); any value is accepted",
      n: "n: `Options` is not declared in this module (imported and global types are not followed); any value is accepted",
    });
  });

  it("gives no note to parameters it describes fully", () => {
    expect(compileCode(`export default async (url: string, n = 3) => {}`).variables).toEqual([
      { name: "url", type: "string", required: true },
      { name: "n", type: "number", default: "3", required: false },
    ]);
  });

  it("keeps the whole schema under its size cap by giving up on the largest parameters", () => {
    const members = Array.from({ length: 3000 }, (_, i) => `p${i}: "${"v".repeat(20)}${i}"`).join("; ");
    const source = `export default async (small: string, big: { ${members} }) => {}`;
    const compiled = compileCode(source);
    expect(Buffer.byteLength(JSON.stringify(compiled.input_schema))).toBeLessThanOrEqual(MAX_SCHEMA_BYTES + 200);
    expect(compiled.input_schema.properties).toMatchObject({ small: { type: "string" }, big: {} });
    expect(notes(source).big).toMatch(/larger than 65536 bytes/);
  });
});

describe("deriveSchemas: the output schema", () => {
  it("is the declared return type without its Promise, else {}", () => {
    expect(compileCode(`export default async (): Promise<{ title: string; n?: number }> => ({ title: "" })`).output_schema).toEqual({
      type: "object",
      properties: { title: { type: "string" }, n: { type: "number" } },
      required: ["title"],
      additionalProperties: false,
    });
    expect(compileCode(`export default async (): Promise<void> => {}`).output_schema).toEqual({ type: "null" });
    expect(compileCode(`export default async () => 1`).output_schema).toEqual({});
  });
});
