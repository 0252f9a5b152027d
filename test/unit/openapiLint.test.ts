import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { openapiDocument } from "../../lambdas/schemas/openapiDocument";
import { offlineEnv } from "../helpers/offlineEnv";

const ROOT = path.resolve(__dirname, "../..");
const REDOCLY = path.join(ROOT, "node_modules/@redocly/cli/bin/cli.js");

interface LintReport {
  totals: { errors: number; warnings: number; ignored: number };
  problems: { ruleId: string; message: string; location: { pointer?: string }[] }[];
}

describe("the OpenAPI document", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "browserfn-openapi-lint-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("passes redocly lint (redocly.yaml) with no error and no warning, offline", async () => {
    const file = path.join(dir, "openapi.json");
    await writeFile(file, JSON.stringify(openapiDocument("http://127.0.0.1:8787"), null, 2));
    const run = await promisify(execFile)(process.execPath, [REDOCLY, "lint", file, "--config", path.join(ROOT, "redocly.yaml"), "--format", "json"], {
      cwd: dir,
      env: offlineEnv(),
      timeout: 30_000,
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: { stdout?: string; stderr?: string }) => ({ stdout: error.stdout ?? "", stderr: error.stderr ?? "" }));
    let report: LintReport;
    try {
      report = JSON.parse(run.stdout) as LintReport;
    } catch {
      throw new Error(`redocly lint did not answer a JSON report:\n${run.stdout}\n${run.stderr}`);
    }
    const problems = report.problems.map((p) => `${p.ruleId} at ${p.location.map((l) => l.pointer).join(", ")}: ${p.message}`);
    expect(problems).toEqual([]);
    expect(report.totals).toEqual({ errors: 0, warnings: 0, ignored: 0 });
  });
});
