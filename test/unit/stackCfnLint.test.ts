import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { synthStack } from "../helpers/testStack";
import { offlineEnv } from "../helpers/offlineEnv";

// cfn-lint on the synthesized template: what CloudFormation would refuse (errors) or warns about.
// .ci/run installs it (scripts/cfn-lint-tool.sh); without it this file is skipped, and says so.

/**
 * Findings left alone, each for a reason. W3005: CDK makes every Lambda DependsOn its role and
 * the role's default policy; the role is also a GetAtt, so cfn-lint calls that DependsOn
 * redundant. It is CDK's own ordering (the policy must exist before the function runs) and harmless.
 */
const IGNORED = ["W3005"];

interface Finding {
  Rule: { Id: string };
  Level: string;
  Message: string;
  Location: { Path: (string | number)[] };
}

function cfnLintVersion(): string | null {
  try {
    return execFileSync("cfn-lint", ["--version"], { encoding: "utf8", timeout: 30_000 }).trim();
  } catch {
    return null;
  }
}

const version = cfnLintVersion();
const describeLint = version ? describe : describe.skip;
if (!version) console.warn("stackCfnLint: SKIPPED, cfn-lint is not installed (bash scripts/cfn-lint-tool.sh installs it; .ci/run does)");
const title = version
  ? `cfn-lint (${version}) on the synthesized template`
  : "cfn-lint on the synthesized template — SKIPPED: cfn-lint is not installed (bash scripts/cfn-lint-tool.sh installs it; .ci/run does)";

describeLint(title, () => {
  const dir = mkdtempSync(path.join(tmpdir(), "browserfn-cfn-lint-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("finds no error and no warning (but the ignored ones)", async () => {
    const file = path.join(dir, "template.json");
    writeFileSync(file, JSON.stringify(synthStack().toJSON(), null, 1));
    const run = await promisify(execFile)("cfn-lint", ["--format", "json", "--regions", "eu-west-1", "--ignore-checks", ...IGNORED, "--", file], {
      env: offlineEnv(),
      timeout: 120_000,
      maxBuffer: 64 * 1024 * 1024,
    }).catch((error: { stdout?: string; stderr?: string; code?: number }) => ({ stdout: error.stdout ?? "", stderr: `${error.stderr ?? ""} (exit ${error.code})` }));
    let findings: Finding[];
    try {
      findings = JSON.parse(run.stdout) as Finding[];
    } catch {
      throw new Error(`cfn-lint did not answer a JSON report:\n${run.stdout}\n${run.stderr}`);
    }
    expect(findings.map((f) => `${f.Rule.Id} ${f.Level} ${f.Location.Path.join("/")}: ${f.Message}`)).toEqual([]);
  }, 180_000);
});
