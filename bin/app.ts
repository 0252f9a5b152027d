/** The CDK app: `npm run synth` (offline) and `npx cdk deploy`. */
import { App } from "aws-cdk-lib";
import { BrowserfnStack } from "../lib/browserfnStack";

const app = new App();
const prefix = app.node.tryGetContext("prefix") ?? "browserfn";
new BrowserfnStack(app, "Browserfn", { prefix, description: "browserfn: browser automations as serverless HTTP APIs" });
app.synth();
