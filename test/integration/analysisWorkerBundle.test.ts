import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { AnalysisPool } from "../../lambdas/code/analysis/analysisPool";
import { ANALYSIS_WORKER_BUNDLE, analysisWorkerBundleArgs, bundledWorkerScript } from "../../lambdas/code/analysis/analysisWorkerScript";
import { DEFAULT_ANALYSIS_BUDGET } from "../../lambdas/code/analysis/codeAnalysis";
import { ApiError } from "../../lambdas/http/errors";
import { TOO_DEEP } from "../helpers/hostileCode";

const ROOT = path.resolve(__dirname, "../..");

// On AWS, the create, update and fork Lambdas start the analysis worker from a bundle the
// stack's bundling writes beside their code (lib/handlerFunction.ts), with the same esbuild
// arguments as here: no tsx, no TypeScript sources, one file.
describe("the analysis worker as bundled for a Lambda", () => {
  let dir: string;
  let pool: AnalysisPool | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "browserfn-analysis-bundle-"));
    const esbuild = path.join(ROOT, "node_modules", ".bin", "esbuild");
    await promisify(execFile)(esbuild, analysisWorkerBundleArgs(ROOT, path.join(dir, ANALYSIS_WORKER_BUNDLE)), { cwd: ROOT });
  }, 120_000);
  afterAll(async () => {
    await pool?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("reads code on its thread: parameters, schemas, JavaScript, and invalid_code for code nested too deeply", async () => {
    pool = new AnalysisPool({ script: bundledWorkerScript(dir), budget: DEFAULT_ANALYSIS_BUDGET, maxWorkers: 1, log: () => undefined });
    const compiled = await pool.compile("export default async (url: string, n: number = 2) => ({ url, n });", "acct");
    expect(compiled.variables).toEqual([
      { name: "url", type: "string", required: true },
      { name: "n", type: "number", default: "2", required: false },
    ]);
    expect(compiled.input_schema.properties).toEqual({ url: { type: "string" }, n: { type: "number", default: 2 } });
    expect(compiled.js).toContain("exports.default");
    const deep = pool.compile((TOO_DEEP["generics 37,000 levels deep"] as () => string)(), "acct");
    await expect(deep).rejects.toBeInstanceOf(ApiError);
    await expect(deep).rejects.toMatchObject({ code: "invalid_code", details: { reason: "nesting" } });
    expect(await pool.warnings("export default async () => 1;", "acct")).toEqual([]);
  }, 120_000);
});
