/**
 * What a fresh worker process (one per run) parses and runs before it is ready (issue #27,
 * round 4 session 12): puppeteer-core is kept out of the code V8 parses at load (as text in a
 * comment, compiled at first use) and out of what runs at start, and a run that asks for it
 * still gets the whole module. The worker is started as its host starts it (Node's permission
 * model, reading its bundle and nothing else) and speaks the real protocol.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { buildWorkerBundle, playwrightBundleOf } from "../../lambdas/runner/buildWorkerBundle";
import { bundleRunner } from "../../lambdas/runner/bundleRunner";
import { DeferredModules } from "../../lambdas/runner/deferredModule";

let dir: string;
let bundle: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "worker-bundle-start-"));
  bundle = await buildWorkerBundle(dir);
}, 120_000);
afterAll(() => rm(dir, { recursive: true, force: true }));

/** The bundle's text without its block comments (what V8 parses, give or take strings). */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "");
}

function startWorker(): ChildProcess {
  return spawn(
    process.execPath,
    ["--experimental-permission", `--allow-fs-read=${bundle}`, `--allow-fs-read=${playwrightBundleOf(bundle)}`, "--disable-warning=ExperimentalWarning", bundle],
    { env: {}, stdio: ["ignore", "ignore", "pipe", "ipc"] },
  );
}

function next(child: ChildProcess, type: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: Record<string, unknown>) => {
      if (message.type !== type) return;
      child.off("message", onMessage);
      resolve(message);
    };
    child.on("message", onMessage);
    child.once("exit", (code) => reject(new Error(`the worker exited (${code}) before ${type}`)));
  });
}

async function runOnce(code: string): Promise<Record<string, unknown>> {
  const child = startWorker();
  try {
    const ready = next(child, "ready");
    child.send({ type: "init", code, parameter_style: "positional", variables: [], token: "t" });
    await ready;
    const done = next(child, "done");
    child.send({ type: "run", runId: "r1", params: {}, timeoutMs: 20_000, artifactsUrl: "/a/", secrets: {} });
    return (await done).outcome as Record<string, unknown>;
  } finally {
    child.kill("SIGKILL");
  }
}

describe("the worker bundle's start", () => {
  it("keeps puppeteer-core out of the code parsed at load", async () => {
    const text = await readFile(bundle, "utf8");
    // puppeteer-core's own code is in the file, in its kept comment.
    expect(text).toContain("var puppeteer = new Puppeteer.PuppeteerNode(");
    expect(withoutComments(text)).not.toContain("PuppeteerNode");
    // Before: ≈ 1.9 MB parsed at every worker start; puppeteer-core was ≈ 1.5 MB of it.
    expect(Buffer.byteLength(withoutComments(text))).toBeLessThan(600_000);
  });

  it("gives a run that requires puppeteer-core the whole module, and runs one that does not", async () => {
    const uses = `module.exports = async function () {
      const p = require("puppeteer-core");
      return { connect: typeof p.connect, devices: Object.keys(p.KnownDevices).length > 10, launch: typeof p.default.launch, errors: typeof p.TimeoutError };
    };`;
    const outcome = await runOnce(uses);
    expect(outcome.status).toBe("succeeded");
    expect(JSON.parse(String(outcome.result_json))).toEqual({ connect: "function", devices: true, launch: "function", errors: "function" });
    const plainOutcome = await runOnce("module.exports = async function () { return { ok: true }; };");
    expect([plainOutcome.status, plainOutcome.result_json]).toEqual(["succeeded", JSON.stringify({ ok: true })]);
  }, 60_000);

  it("keeps a module's text whatever it holds: in a comment, or in a string when it holds the marker", async () => {
    const tricky = path.join(dir, "tricky.cjs");
    const marked = path.join(dir, "marked.cjs");
    // Comments, comment ends inside strings and regexps, non-ASCII text, template literals, backslashes.
    await writeFile(tricky, String.raw`module.exports = { text: "a */ b /* c", re: /\*\//.source, slash: "\\", tpl: "é 🙂" }; /* a comment */ // another` + "\n");
    await writeFile(marked, 'module.exports = { text: "has \u0001 and */ in it" };\n');
    const entry = path.join(dir, "entry.cjs");
    await writeFile(entry, `module.exports = () => [require(${JSON.stringify(tricky)}), require(${JSON.stringify(marked)})];\n`);
    const deferred = new DeferredModules();
    const out = await bundleRunner({ entry, outfile: path.join(dir, "out.cjs"), plugins: [deferred.plugin([tricky, marked])] });
    await deferred.splice(out);
    const text = await readFile(out, "utf8");
    expect(text).not.toContain("return \"browserfn-deferred-module:");
    expect(withoutComments(text)).not.toContain("a comment");
    // In a Node process of its own, as a worker loads it (Jest's own require would transform it).
    const { stdout } = await promisify(execFile)(process.execPath, ["-e", `process.stdout.write(JSON.stringify(require(${JSON.stringify(out)})()))`]);
    const loaded = JSON.parse(stdout) as unknown;
    expect(loaded).toEqual([
      { text: "a */ b /* c", re: String.raw`\*\/`, slash: "\\", tpl: "é 🙂" },
      { text: "has \u0001 and */ in it" },
    ]);
  });
});
