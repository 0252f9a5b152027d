/**
 * The CDK app: `npm run synth` (offline) and `npm run deploy`. Settings come from the CDK
 * context (`-c key=value` or cdk.json; see lib/stackSettings.ts). The two Lambda layers are
 * built first (they need an async build), then the stack is synthesized and checked with
 * cdk-nag's AWS Solutions rules: an unacknowledged finding fails the synth.
 */
import path from "node:path";
import { App, Validations } from "aws-cdk-lib";
import { AwsSolutionsChecks } from "cdk-nag";
import { BrowserfnStack } from "../lib/browserfnStack";
import { prepareLayerAssets } from "../lib/layerAssets";

async function main(): Promise<void> {
  const app = new App();
  const layerAssets = await prepareLayerAssets(path.resolve(__dirname, ".."));
  try {
    new BrowserfnStack(app, app.node.tryGetContext("stackName") ?? "Browserfn", {
      description: "browserfn: browser automations as serverless HTTP APIs",
      layerAssets,
    });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    app.synth();
  } finally {
    // CDK has copied both directories into cdk.out by now.
    await layerAssets.cleanup();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
