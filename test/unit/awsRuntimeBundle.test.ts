import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { strFromU8, unzipSync } from "fflate";
import { compileCode } from "../../lambdas/code/compileCode";
import type { Browser } from "puppeteer-core";
import { warmBrowser } from "../../lambdas/runner/lambdaBrowser";
import { createLambdaHandler, type LambdaRunEvent } from "../../lambdas/runner/lambdaHandler";
import { buildLambdaRunnerBundle } from "../../lambdas/runner/lambdaRunnerBundle";
import { functionZip } from "../../lambdas/runtime/aws/functionZip";
import { RUNNER_LAYER_PATH } from "../../lambdas/runner/lambdaPackage";

const ROOT = path.resolve(__dirname, "../..");

const SOURCE = `import { Session } from "browserfn/runtime";
export default async function run(html: string, n: number = 2) {
  await using session = await Session.start({ timeout_minutes: 1 });
  const page = await session.newPage();
  await page.setContent(html);
  console.log("title read");
  return { title: await page.title(), n };
}`;

/**
 * Calls the handler of the bundled runner as Lambda's Node runtime would, in a plain Node
 * process, then closes its browser: the process must then end by itself (nothing left open).
 */
const CHILD = `
const [bundle, codeDir, event] = process.argv.slice(1);
const handler = require(bundle).createLambdaHandler(codeDir);
(async () => {
  const outcomes = [await handler(JSON.parse(event)), await handler(JSON.parse(event))];
  await handler.close();
  process.stdout.write(JSON.stringify(outcomes));
})();
`;

describe("the Lambda runner bundle (runtime layer)", () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "browserfn-layer-"));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("is one CommonJS file in the layer layout that runs a deployed zip with @sparticuz/chromium from beside it", async () => {
    const bundle = await buildLambdaRunnerBundle(path.join(dir, "layer"));
    expect(path.relative(path.join(dir, "layer"), bundle)).toBe(path.relative("/opt", RUNNER_LAYER_PATH));
    // The chromium layer's part of /opt/nodejs: its node_modules with @sparticuz/chromium.
    await symlink(path.join(ROOT, "node_modules"), path.join(dir, "layer", "nodejs", "node_modules"));

    const compiled = compileCode(SOURCE);
    const { zip } = functionZip({
      function_id: "fn_x", version: 1, created_at: "", code_sha256: compiled.code_sha256, variables: compiled.variables,
      parameter_style: compiled.parameter_style, source: SOURCE, js: compiled.js,
    });
    const codeDir = path.join(dir, "task");
    await mkdir(codeDir);
    for (const [name, data] of Object.entries(unzipSync(zip))) await writeFile(path.join(codeDir, name), data);
    expect(strFromU8(unzipSync(zip)["index.js"]!)).toContain(RUNNER_LAYER_PATH);

    const event = JSON.stringify({ run_id: "run_1", params: { html: "<title>From the layer</title>" }, timeout_ms: 30_000 });
    // A script file, as Lambda's runtime loads a handler (`node -e` makes `module` a global, which Lambda's realm has not).
    const child = path.join(dir, "invoke-twice.cjs");
    await writeFile(child, CHILD.replace("process.argv.slice(1)", "process.argv.slice(2)"));
    const { stdout } = await promisify(execFile)(process.execPath, [child, bundle, codeDir, event], { cwd: dir, timeout: 60_000 });
    const outcome = { status: "succeeded", result_json: '{"title":"From the layer","n":2}', logs: "LOG title read\n", browser_ms: expect.any(Number), peak_memory_mb: expect.any(Number), runner_protocol: 2 };
    const outcomes = JSON.parse(stdout) as { peak_memory_mb: number }[];
    expect(outcomes).toEqual([outcome, outcome]);
    // The Node process and its Chromium together: well over what Node alone takes.
    for (const { peak_memory_mb } of outcomes) expect(peak_memory_mb).toBeGreaterThan(80);
  }, 90_000);
});

describe("the Lambda runner's container", () => {
  it("keeps one browser warm, launches another when it died, and tries again after a failed launch", async () => {
    const killed: number[] = [];
    let launches = 0;
    const launch = async () => {
      const id = ++launches;
      if (id === 3) throw new Error("no chromium");
      const fake = { id, connected: true, process: () => ({ kill: () => void killed.push(id) }), close: async () => undefined };
      return fake as unknown as Browser;
    };
    const browser = warmBrowser(launch);
    const first = await browser.get();
    expect(await browser.get()).toBe(first);
    (first as unknown as { connected: boolean }).connected = false;
    const second = await browser.get();
    expect([second, killed]).toEqual([expect.objectContaining({ id: 2 }), [1]]);
    (second as unknown as { connected: boolean }).connected = false;
    await expect(browser.get()).rejects.toThrow("no chromium");
    expect(await browser.get()).toEqual(expect.objectContaining({ id: 4 }));
    await browser.close();
  });

  it("throws for a broken deployment or event (Lambda reports a FunctionError), never for user code", async () => {
    const event: LambdaRunEvent = { run_id: "r", params: {}, timeout_ms: 1000 };
    const missing = createLambdaHandler(path.join(tmpdir(), "browserfn-no-such-dir"));
    await expect(missing(event)).rejects.toThrow(/ENOENT.*code\.cjs/);
    await expect(missing({ run_id: "r" } as LambdaRunEvent)).rejects.toThrow(/The event must be/);
    await missing.close();
  });
});
