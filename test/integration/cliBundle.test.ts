import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { bundleAutomation } from "../../bin/cli/bundleAutomation";
import { compileCode } from "../../lambdas/code/compileCode";
import { MAX_CODE_BYTES } from "../../lambdas/code/extractParameters";
import { loadAutomation } from "../../lambdas/runner/loadAutomation";
import { mapAutomationStack } from "../../lambdas/runner/automationStack";
import { takeInlineMap } from "../../lambdas/code/sourceMaps";
import { FIXTURES, cliEnv, runCli } from "../fixtures/cli/runCli";
import { type TestService, startTestService } from "../helpers/localService";

/** `browserfn deploy`'s bundling, with real esbuild and real packages, checked by the service's own compile and loader. */
describe("bundleAutomation", () => {
  let dir: string;

  beforeAll(async () => {
    // Inside the project (test-artifacts/ is git-ignored), so that npm packages resolve from its node_modules.
    const artifacts = path.join(__dirname, "../../test-artifacts");
    await mkdir(artifacts, { recursive: true });
    dir = await mkdtemp(path.join(artifacts, "cli-bundle-"));
    await writeFile(path.join(dir, "math.ts"), `export const double = (n: number) => n * 2;\nexport default function triple(n: number) { return n * 3; }\nexport interface Opts { n: number }\nexport const unused = () => "never bundled";\n`);
    await writeFile(path.join(dir, "setup.ts"), `(globalThis as Record<string, unknown>).__setupRan = ((globalThis as Record<string, unknown>).__setupRan as number ?? 0) + 1;\n`);
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const write = async (name: string, lines: string[]) => {
    const file = path.join(dir, name);
    await writeFile(file, `${lines.join("\n")}\n`);
    return file;
  };

  it("bundles every import form as esbuild does, keeps the entry's parameters, and runs as the service runs it", async () => {
    const entry = await write("entry.ts", [
      `#!/usr/bin/env node`,
      `import { Session } from "browserfn/runtime";`,
      `import { createHash } from "node:crypto";`,
      `import "./setup";`,
      `import triple, { double, double as twice, type Opts } from "./math";`,
      `import * as math from "./math";`,
      `import type { Opts as O2 } from "./math";`,
      `import ms from "ms";`,
      `export default async function run(n: number, label: string = "x", opts?: Opts, other?: O2) {`,
      `  return { d: double(n), t: twice(n), tr: triple(n), ns: math.double(1), ms: ms("1s"), h: createHash("sha1").update(label).digest("hex").length, s: typeof Session, setup: (globalThis as Record<string, unknown>).__setupRan };`,
      `}`,
    ]);
    const bundled = await bundleAutomation(entry);
    expect(bundled.parts.map((part) => part.name).sort()).toEqual(["./math.ts", "./setup.ts", "ms"]);
    expect(bundled.dependencyBytes + bundled.entryBytes).toBe(Buffer.byteLength(bundled.code));
    // The provided imports first (ES imports are hoisted; the service's CommonJS requires them in place), minified.
    const [first, second] = bundled.code.split("\n");
    expect(first).toMatch(/^import\{Session as [\w$]+\}from"browserfn\/runtime";$/);
    expect(second).toMatch(/^import\{createHash as [\w$]+\}from"node:crypto";$/);
    expect(bundled.code).not.toContain("./math");
    expect(bundled.code).not.toContain("never bundled"); // tree-shaken
    expect(bundled.code).toMatch(/\nexport default async function run\(n: number, label: string = "x", opts\?: Opts, other\?: O2\) \{\n {2}return [\w$]+\.apply\(this, arguments\);\n\}\n$/);

    const compiled = compileCode(bundled.code);
    expect(compiled.variables).toEqual([
      { name: "n", type: "number", required: true },
      { name: "label", type: "string", required: false, default: '"x"' },
      // Imported types: the service cannot see them, in the bundle or in the file as written.
      { name: "opts", type: "Opts", required: false, schema_note: expect.stringMatching(/^opts: `Opts` is not declared in this module/) },
      { name: "other", type: "O2", required: false, schema_note: expect.stringMatching(/^other: `O2` is not declared in this module/) },
    ]);
    const run = loadAutomation(compiled.js);
    expect(await run(5)).toEqual({ d: 10, t: 10, tr: 15, ns: 2, ms: 1000, h: 40, s: "function", setup: 1 });
    expect(await run(1, "yz")).toMatchObject({ d: 2, h: 40 });
  });

  it("keeps every parameter form the service reads exactly as it reads it from the file as written", async () => {
    const defaults = "export default async function run(a, b = 2, c: string | undefined, d?: number[], e = Date.now(), f = `t${b}`, " +
      'g: { x: number } = { "x": 1 }, h = -1.5e3, i = [true, null], j: "a" | "b" = "a") { return ms("1s") + String(e) + f; }';
    const entries = [
      defaults,
      'export default async ({ url, "max-items": max = 10, flag }: { url: string; "max-items"?: number; flag?: boolean }) => ms(url) + max + String(flag);',
      'interface Options { url: string; when?: string; limit: number }\nexport default async ({ url, when = "now", limit }: Options = {} as Options) => ms(url) + when + limit;',
      'export default async function ({ default: d, type, id }: { default: string; type?: "a" | "b"; id: number }) { return ms(d) + String(type) + id; }',
      'const go = async () => ms("1s");\nexport default go;',
      "export default function plain(this: unknown, x: number) { return ms(String(x)); }",
    ];
    for (const [i, entry] of entries.entries()) {
      const source = `import ms from "ms";\n${entry}\n`;
      const file = path.join(dir, `signature${i}.ts`);
      await writeFile(file, source);
      const asWritten = compileCode(source);
      const fromBundle = compileCode((await bundleAutomation(file)).code);
      expect({ entry, variables: fromBundle.variables, style: fromBundle.parameter_style }).toEqual({ entry, variables: asWritten.variables, style: asWritten.parameter_style });
    }
  });

  it("keeps the input schema the file as written gives: its interfaces, type aliases and JSDoc come along", async () => {
    const source = [
      `import { double } from "./math";`,
      `/** How to search. */`,
      `interface Options {`,
      `  /** Result pages. @integer */`,
      `  pages: number;`,
      `  mode?: Mode;`,
      `}`,
      `type Mode = "fast" | "full";`,
      `/**`,
      ` * Searches.`,
      ` * @param query what to search for`,
      ` */`,
      `export default async function run(query: string, options?: Options, mode: Mode = "fast") {`,
      `  return double(query.length) + String(options?.pages) + mode;`,
      `}`,
    ].join("\n");
    const file = path.join(dir, "schema.ts");
    await writeFile(file, `${source}\n`);
    const bundled = await bundleAutomation(file);
    expect(bundled.parts.map((part) => part.name)).toEqual(["./math.ts"]);
    const asWritten = compileCode(source);
    const fromBundle = compileCode(bundled.code);
    expect(fromBundle.input_schema).toEqual(asWritten.input_schema);
    expect(fromBundle.input_schema.properties.options).toMatchObject({ properties: { pages: { type: "integer", description: "Result pages." } } });
    expect(fromBundle.input_schema.properties.query).toEqual({ type: "string", description: "what to search for" });
    expect(await loadAutomation(fromBundle.js)("abc", { pages: 2 })).toBe("62fast");
  });

  it("carries a map to the user's own files (a shebang line and moved imports kept in step), which names their lines in a stack", async () => {
    await writeFile(path.join(dir, "fail.ts"), `export function fail(why: string): never {\n  throw new Error(why);\n}\n`);
    const entry = await write("mapped.ts", [
      `#!/usr/bin/env node`,
      `import { Session } from "browserfn/runtime";`,
      `import ms from "ms";`,
      `import { fail } from "./fail";`,
      `export default async function run(n: number) {`,
      `  if (n > ms("1s")) return typeof Session;`,
      `  fail("too small");`,
      `}`,
    ]);
    const bundled = await bundleAutomation(entry);
    expect(bundled.withSourceMap?.startsWith(bundled.code)).toBe(true);
    const compiled = compileCode(bundled.withSourceMap ?? "");
    expect(compiled.variables).toEqual(compileCode(bundled.code).variables);
    const thrown = await Promise.resolve()
      .then(() => loadAutomation(compiled.js)(1))
      .catch((error: Error) => error);
    const frames = mapAutomationStack(String((thrown as Error).stack), compiled.js).split("\n");
    expect(frames.slice(0, 3)).toEqual(["Error: too small", expect.stringMatching(/^ {4}at [\w$]+ \(fail\.ts:2:9\)$/), expect.stringMatching(/^ {4}at [\w$]+ \(mapped\.ts:7:3\)$/)]);
    // The npm package's code is left out of the map (its frames keep their place in the bundle).
    const { map } = takeInlineMap(bundled.withSourceMap ?? "");
    expect(map?.sources.sort()).toEqual(["fail.ts", "mapped.ts"]);
  });

  it("leaves playwright, playwright-core, puppeteer and puppeteer-core to the runtime (scripts as they are), bundling the rest", async () => {
    const entry = await write("script.ts", [
      `import { chromium } from "playwright";`,
      `import { devices } from "playwright-core";`,
      `import puppeteer from "puppeteer";`,
      `import { KnownDevices } from "puppeteer-core";`,
      `import { double } from "./math";`,
      `export default async function run(n: number) {`,
      `  return [typeof chromium.launch, typeof devices, typeof puppeteer.launch, typeof KnownDevices, double(n)];`,
      `}`,
    ]);
    const bundled = await bundleAutomation(entry);
    for (const name of ["playwright", "playwright-core", "puppeteer", "puppeteer-core"]) expect(bundled.code).toContain(`from"${name}"`);
    expect(bundled.parts.map((part) => part.name)).toEqual(["./math.ts"]);
    expect(compileCode(bundled.code).variables).toEqual([expect.objectContaining({ name: "n", type: "number" })]);
  });

  it("sends a file with nothing to bundle as written", async () => {
    const source = `import { Session } from "browserfn/runtime";\nimport type { Opts } from "./math";\nimport { readFile } from "node:fs/promises";\nexport default async (o: Opts) => typeof Session + typeof readFile;\n`;
    const entry = path.join(dir, "plain.ts");
    await writeFile(entry, source);
    const bundled = await bundleAutomation(entry);
    expect(bundled).toEqual({ code: source, entryBytes: Buffer.byteLength(source), dependencyBytes: 0, parts: [] });
  });

  it("tree-shakes a namespace a package re-exports by name: zod/mini as `{ z }`, `* as z` or its default", async () => {
    const use = `const Item = z.object({ name: z.string() });\nexport default async function run(name: string) { return Item.parse({ name }); }`;
    const sizes: Record<string, number> = {};
    for (const [label, line] of Object.entries({ named: `import { z } from "zod/mini";`, namespace: `import * as z from "zod/mini";`, fromZod: `import { z } from "zod";` })) {
      const bundled = await bundleAutomation(await write(`zod-${label}.ts`, [line, use]));
      sizes[label] = Buffer.byteLength(bundled.code);
      const run = loadAutomation(compileCode(bundled.code).js);
      expect(await run("box")).toEqual({ name: "box" });
      await expect(Promise.resolve().then(() => run(42))).rejects.toThrow();
    }
    // esbuild alone keeps all of zod/mini for `{ z }` (428 KB); only what is used is bundled.
    expect(sizes.named).toBeLessThan(32 * 1024);
    expect(Math.abs((sizes.named ?? 0) - (sizes.namespace ?? 0))).toBeLessThan(2 * 1024);
    expect(sizes.fromZod).toBeLessThan(MAX_CODE_BYTES);
  });

  it("names the file that imports a package that is not installed", async () => {
    await mkdir(path.join(dir, "helpers"), { recursive: true });
    await writeFile(path.join(dir, "helpers", "pad.ts"), `import pad from "left-pad-not-installed/sub";\nexport const padded = (s: string) => pad(s, 5);\n`);
    const entry = await write("pads.ts", [`import { padded } from "./helpers/pad";`, `export default async function run(s: string) { return padded(s); }`]);
    await expect(bundleAutomation(entry)).rejects.toThrow("Cannot find package 'left-pad-not-installed' imported by helpers/pad.ts: run npm install left-pad-not-installed");
  });
});

describe("browserfn deploy with npm packages, on a real local service", () => {
  let svc: TestService;
  let configHome: string;
  let env: NodeJS.ProcessEnv;
  const cli = (...args: string[]) => runCli(args, env);

  beforeAll(async () => {
    svc = await startTestService();
    configHome = await mkdtemp(path.join(tmpdir(), "browserfn-cli-bundle-config-"));
    env = cliEnv(configHome, { BROWSERFN_URL: svc.url, BROWSERFN_API_KEY: svc.adminKey });
  });
  afterAll(async () => {
    await svc?.destroy();
    if (configHome) await rm(configHome, { recursive: true, force: true });
  });

  it("deploys `import { z } from \"zod/mini\"` far under the code limit, and it runs", async () => {
    const deployed = await cli("deploy", path.join(FIXTURES, "zodMini.ts"), "--name", "zod-mini", "--json");
    expect(deployed.stderr).toMatch(/Bundled \d+\.\d KB: zodMini\.ts \d+\.\d KB, zod \d+\.\d KB/);
    expect(deployed.code).toBe(0);
    expect(JSON.parse(deployed.stdout).variables).toEqual([
      { name: "id", type: "string", required: true },
      { name: "qty", type: "number", required: false, default: "1" },
    ]);
    const source = (await svc.call("GET", "/functions/zod-mini/versions/1")).body.code as string;
    expect(Buffer.byteLength(source)).toBeLessThan(32 * 1024);

    const valid = await cli("invoke", "zod-mini", "-p", "id=abc", "-p", "qty=2", "--json");
    expect(valid.stderr).toBe("");
    expect(valid.code).toBe(0);
    expect(JSON.parse(valid.stdout)).toEqual({ ok: true, order: { id: "abc", qty: 2 } });
    const invalid = await cli("invoke", "zod-mini", "--data", '{"id": "x", "qty": -1}', "--json");
    expect(JSON.parse(invalid.stdout)).toEqual({ ok: false, invalid: ["id", "qty"] });
  });

  it("deploys a bundle with a source map to the file: a thrown error's stack names the file's own line, in the 500 and the run", async () => {
    const deployed = await cli("deploy", path.join(FIXTURES, "zodThrows.ts"), "--name", "zod-throws");
    expect(deployed.code).toBe(0);
    expect(deployed.stderr).toMatch(/With a source map to zodThrows\.ts \(\d+\.\d KB, counted in the limit\): errors name its lines/);
    const source = (await svc.call("GET", "/functions/zod-throws/versions/1")).body.code as string;
    expect(source).toMatch(/\n\/\/# sourceMappingURL=data:application\/json;base64,[A-Za-z0-9+/]+=*\n$/);
    expect(Buffer.byteLength(source)).toBeLessThan(32 * 1024);

    expect((await svc.call("POST", "/functions/zod-throws", { body: { id: "abc" } })).body).toEqual({ id: "abc" });
    const failed = await svc.call("POST", "/functions/zod-throws", { body: { id: "q" } });
    expect(failed.status).toBe(500);
    const error = (failed.body as { error: { code: string; message: string; details: { run_id: string; stack: string } } }).error;
    expect(error).toMatchObject({ code: "function_error", message: "id q is too short" });
    // The minified helper's name is the bundle's; its place is the file's (line 12, column 9: `new Error`).
    expect(error.details.stack).toMatch(/^Error: id q is too short\n {4}at [\w$]+ \(zodThrows\.ts:12:9\)\n {4}at [\w$]+ \(zodThrows\.ts:16:16\)\n/);
    const run = await svc.call("GET", `/runs/${error.details.run_id}`);
    expect((run.body as { error: { stack: string } }).error.stack).toBe(error.details.stack);
    const shown = await cli("runs", "get", error.details.run_id);
    expect(shown.stdout).toMatch(/\n {6}at [\w$]+ \(zodThrows\.ts:12:9\)\n/);
  });

  it("deploys the whole of zod under the limit when it is used through its members, and it runs", async () => {
    const deployed = await cli("deploy", path.join(FIXTURES, "zodFull.ts"), "--name", "zod-full");
    expect(deployed.code).toBe(0);
    const kb = Number(/Bundled (\d+\.\d) KB/.exec(deployed.stderr)?.[1]);
    expect(kb).toBeGreaterThan(32);
    expect(kb).toBeLessThan(MAX_CODE_BYTES / 1024);
    const invoked = await cli("invoke", "zod-full", "-p", "email=nope", "-p", "age=12", "--json");
    expect(JSON.parse(invoked.stdout)).toEqual({ ok: false, invalid: ["email", "age"] });
    expect(JSON.parse((await cli("invoke", "zod-full", "-p", "email=a@b.co", "--json")).stdout)).toEqual({ ok: true });
  });
});
