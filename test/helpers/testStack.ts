import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { App } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { BrowserfnStack, type BrowserfnStackProps } from "../../lib/browserfnStack";

// Unit tests of the stack stay fast: no bundling (the `aws:cdk:bundling-stacks` context set to
// no stack makes NodejsFunction skip esbuild), no built-in CloudFormation validation, and two
// tiny layer directories instead of Chromium and the runner bundle (made once per test file,
// removed after it).
const layerRoot = mkdtempSync(path.join(tmpdir(), "browserfn-stack-"));
afterAll(() => rmSync(layerRoot, { recursive: true, force: true }));

/** The stack as `cdk synth` would build it, with `props` and app `context` over the test defaults. */
export function testStack(props: Partial<BrowserfnStackProps> = {}, context: Record<string, unknown> = {}): BrowserfnStack {
  const layerAssets = { chromium: path.join(layerRoot, "chromium"), runtime: path.join(layerRoot, "runtime") };
  for (const dir of Object.values(layerAssets)) {
    mkdirSync(path.join(dir, "nodejs"), { recursive: true });
    writeFileSync(path.join(dir, "nodejs", "placeholder.js"), "");
  }
  const app = new App({ context: { "aws:cdk:bundling-stacks": [], ...context }, builtinCloudFormationValidation: false });
  return new BrowserfnStack(app, "Test", { prefix: "bfn-test", layerAssets, ...props });
}

/** The synthesized template of testStack. */
export function synthStack(props: Partial<BrowserfnStackProps> = {}, context: Record<string, unknown> = {}): Template {
  return Template.fromStack(testStack(props, context));
}
