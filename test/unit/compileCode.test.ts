import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileCode } from "../../lambdas/code/compileCode";
import { ApiError } from "../../lambdas/http/errors";

const SOURCE = `import { readFile } from "node:fs/promises";

interface Options { url: string; max_items?: number }

export default async function run({ url, max_items = 10 }: Options): Promise<string[]> {
  const text: string = await readFile(url, "utf8");
  return text.split("\\n").slice(0, max_items as number);
}
`;

/**
 * Runs transpiled JS as a real ES module on this Node, in a child process (jest's vm sandbox
 * refuses dynamic import() without --experimental-vm-modules). The runner calls the default
 * export with a disposable resource and prints the log it collected as JSON.
 */
function runModule(js: string): string[] {
  const dir = mkdtempSync(join(tmpdir(), "compileCode-"));
  try {
    writeFileSync(join(dir, "index.mjs"), js);
    writeFileSync(
      join(dir, "runner.mjs"),
      `import run from "./index.mjs";
const log = [];
const resource = { name: "browser", async [Symbol.asyncDispose]() { log.push("resource disposed"); } };
log.push("returned " + (await run(resource, log)));
console.log(JSON.stringify(log));
`,
    );
    const stdout = execFileSync(process.execPath, [join(dir, "runner.mjs")], { encoding: "utf8" });
    return JSON.parse(stdout) as string[];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("compileCode", () => {
  it("strips types, keeps ES module syntax, and reports the parameters", () => {
    const compiled = compileCode(SOURCE);
    expect(compiled.js).toContain("export default async function run({ url, max_items = 10 })");
    expect(compiled.js).toContain('import { readFile } from "node:fs/promises";');
    expect(compiled.js).not.toMatch(/interface|: string|: Options|Promise<|as number/);
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

  it("lowers `await using` so that the module runs on this Node", () => {
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
    expect(js).toContain("export default async function run(resource, log)");

    expect(runModule(js)).toEqual([
      "inside block",
      "inner disposed",
      "using browser",
      "resource disposed",
      "returned done",
    ]);
  });
});
