import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { bundleAutomation } from "../../bin/cli/bundleAutomation";
import { compileCode } from "../../lambdas/code/compileCode";
import { loadAutomation } from "../../lambdas/runner/loadAutomation";

/** `browserfn deploy`'s bundling, with real esbuild, checked by the service's own compile and loader. */
describe("bundleAutomation", () => {
  let dir: string;

  beforeAll(async () => {
    // Inside the project (test-artifacts/ is git-ignored), so that npm packages resolve from its node_modules.
    const artifacts = path.join(__dirname, "../../test-artifacts");
    await mkdir(artifacts, { recursive: true });
    dir = await mkdtemp(path.join(artifacts, "cli-bundle-"));
    await writeFile(path.join(dir, "math.ts"), `export const double = (n: number) => n * 2;\nexport default function triple(n: number) { return n * 3; }\nexport interface Opts { n: number }\n`);
    await writeFile(path.join(dir, "setup.ts"), `(globalThis as Record<string, unknown>).__setupRan = ((globalThis as Record<string, unknown>).__setupRan as number ?? 0) + 1;\n`);
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("rewrites every import form, keeps the entry's types, and runs as the service runs it", async () => {
    const entry = path.join(dir, "entry.ts");
    await writeFile(
      entry,
      [
        `#!/usr/bin/env node`,
        `/** The entry's own comment stays. */`,
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
        ``,
      ].join("\n"),
    );
    const bundled = await bundleAutomation(entry);
    expect(bundled.modules).toEqual(["./math", "ms"]);
    expect(bundled.code.startsWith("// Imports bundled by `browserfn deploy` (esbuild): ./math, ms\nvar __browserfn_deps=")).toBe(true);
    expect(bundled.code).toContain(`})();\n\n/** The entry's own comment stays. */\nimport { Session } from "browserfn/runtime";\nimport { createHash } from "node:crypto";\n\nconst triple = __browserfn_deps.m0.default; const { double, double: twice } = __browserfn_deps.m0;\nconst math = __browserfn_deps.m0;\n\nconst ms = __browserfn_deps.m1.default;`);
    expect(bundled.code).not.toContain('from "./math"');
    expect(bundled.dependencyBytes + bundled.entryBytes).toBe(Buffer.byteLength(bundled.code));

    const compiled = compileCode(bundled.code);
    expect(compiled.variables).toEqual([
      { name: "n", type: "number", required: true },
      { name: "label", type: "string", required: false, default: '"x"' },
      { name: "opts", type: "Opts", required: false },
      { name: "other", type: "O2", required: false },
    ]);
    const run = loadAutomation(compiled.js);
    expect(await run(5)).toEqual({ d: 10, t: 10, tr: 15, ns: 2, ms: 1000, h: 40, s: "function", setup: 1 });
  });

  it("sends a file with nothing to bundle as written", async () => {
    const entry = path.join(dir, "plain.ts");
    const source = `import { Session } from "browserfn/runtime";\nimport type { Opts } from "./math";\nexport default async (o: Opts) => typeof Session;\n`;
    await writeFile(entry, source);
    const bundled = await bundleAutomation(entry);
    expect(bundled.code).toBe(source.replace(`import type { Opts } from "./math";`, ""));
    expect(bundled).toMatchObject({ modules: [], dependencyBytes: 0 });
  });
});
