import { createHash } from "node:crypto";
import { compileCode } from "../../lambdas/code/compileCode";
import { ApiError } from "../../lambdas/http/errors";

// jest runs tests in a vm context whose Symbol lacks the Symbol.asyncDispose / Symbol.dispose
// that Node 20 defines on its main realm; these are the same registry symbols Node uses.
const symbols = Symbol as unknown as Record<"asyncDispose" | "dispose", symbol | undefined>;
symbols.asyncDispose ??= Symbol.for("nodejs.asyncDispose");
symbols.dispose ??= Symbol.for("nodejs.dispose");

const SOURCE = `import { readFile } from "node:fs/promises";

interface Options { url: string; max_items?: number }

export default async function run({ url, max_items = 10 }: Options): Promise<string[]> {
  const text: string = await readFile(url, "utf8");
  return text.split("\\n").slice(0, max_items as number);
}
`;

type Run = (...args: unknown[]) => Promise<unknown>;

/** Evaluates compiled CommonJS in this process, as the runner does, and returns its exports. */
function evaluate(js: string, require: (name: string) => unknown = () => ({})): { default?: Run } {
  const module = { exports: {} as { default?: Run } };
  new Function("exports", "require", "module", js)(module.exports, require, module);
  return module.exports;
}

describe("compileCode", () => {
  it("strips types, emits CommonJS, and reports the parameters", () => {
    const compiled = compileCode(SOURCE);
    expect(compiled.js).toContain("exports.default = run;");
    expect(compiled.js).toContain("async function run({ url, max_items = 10 })");
    expect(compiled.js).toContain('const promises_1 = require("node:fs/promises");');
    expect(compiled.js).not.toMatch(/^\s*(import|export)\s/m);
    expect(compiled.js).not.toMatch(/interface|: string|: Options|Promise<|as number/);
    expect(compiled.parameter_style).toBe("object");
    expect(compiled.variables).toEqual([
      { name: "url", type: "string", required: true },
      { name: "max_items", type: "number", default: "10", required: false },
    ]);
  });

  it("hashes the source text with SHA-256", () => {
    const source = "export default async () => 'héllo';\n";
    const expected = createHash("sha256").update(Buffer.from(source, "utf8")).digest("hex");
    expect(compileCode(source).code_sha256).toBe(expected);
    expect(expected).toMatch(/^[0-9a-f]{64}$/);
  });

  it("applies every extractParameters rejection", () => {
    expect(() => compileCode("export default 42;")).toThrow(ApiError);
    expect(() => compileCode("export const x = 1;")).toThrow(
      expect.objectContaining({
        code: "invalid_code",
        message: "The module has no default export; export an async function as default",
      }),
    );
    expect(() => compileCode(`export default async () => {};//${"x".repeat(262144)}`)).toThrow(
      /^Code is 262176 bytes; the limit is 262144$/,
    );
  });

  it("lowers `await using` so that the module runs on this Node", async () => {
    const source = `
      interface Resource { name: string; [Symbol.asyncDispose](): Promise<void> }
      export default async function run(resource: Resource, log: string[]): Promise<string> {
        await using held = resource;
        {
          using inner = { [Symbol.dispose]() { log.push("inner disposed"); } };
          log.push("inside block");
        }
        log.push("using " + held.name);
        return "done";
      }`;
    const { js } = compileCode(source);
    expect(js).not.toMatch(/\busing (held|inner)\b/);
    expect(js).toContain("async function run(resource, log)");

    const log: string[] = [];
    const resource = { name: "browser", [Symbol.asyncDispose]: async () => void log.push("resource disposed") };
    const run = evaluate(js).default;
    if (!run) throw new Error("no default export");
    log.push(`returned ${String(await run(resource, log))}`);
    expect(log).toEqual(["inside block", "inner disposed", "using browser", "resource disposed", "returned done"]);
  });

  it("imports through the given require, with esModuleInterop for default imports", async () => {
    const source = `import cjs from "cjs-lib";
      import esm, { named } from "esm-lib";
      import * as ns from "node:path";
      export default async () => [cjs.name, esm, named, typeof ns.join];`;
    const modules: Record<string, unknown> = {
      "cjs-lib": { name: "plain CommonJS object" },
      "esm-lib": { __esModule: true, default: "esm default", named: "esm named" },
      "node:path": { join: () => "" },
    };
    const run = evaluate(compileCode(source).js, (name) => modules[name]).default;
    expect(await run?.()).toEqual(["plain CommonJS object", "esm default", "esm named", "function"]);
  });
});

describe("compileCode: parameter_style", () => {
  it.each([
    ["export default async function run(url: string, n = 3) {}", "positional"],
    ["export default async function run() {}", "positional"],
    ["export default async (options: { url: string }) => options.url;", "positional"],
    ["export default async function run({ url, n = 3 }: { url: string; n?: number }) {}", "object"],
    ["export default async ({ url } = {} as { url?: string }) => url;", "object"],
    ["export default async function run(this: unknown, { url }: { url: string }) {}", "object"],
  ])("%s → %s", (source, style) => {
    expect(compileCode(source).parameter_style).toBe(style);
  });
});
