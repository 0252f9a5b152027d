import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { App, Stack } from "aws-cdk-lib";
import { Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import type { Asset } from "aws-cdk-lib/aws-s3-assets";
import { RetentionDays } from "aws-cdk-lib/aws-logs";
import { SERVICE_LAMBDA_ENV } from "../helpers/awsEnv";
import { dashboardCsp, DASHBOARD_FILES } from "../../lambdas/dashboard/dashboardAssets";
import { createHandlerFunction } from "../../lib/handlerFunction";

const ROOT = path.join(__dirname, "..", "..");

/** A route Lambda's environment, with stand-in credentials (nothing is called). */
const LAMBDA_ENV = { ...SERVICE_LAMBDA_ENV, AWS_ACCESS_KEY_ID: "x", AWS_SECRET_ACCESS_KEY: "y" };

/** Loads the bundle's index.mjs in a Node process of its own and answers one API Gateway (payload 2.0) GET. */
async function callBundle(bundleDir: string, rawPath: string, pathParameters: Record<string, string> | undefined) {
  const event = {
    version: "2.0",
    routeKey: `GET ${rawPath}`,
    rawPath: `/v1${rawPath}`,
    rawQueryString: "",
    headers: { host: "abc.execute-api.eu-west-1.amazonaws.com" },
    pathParameters,
    isBase64Encoded: false,
    requestContext: {
      domainName: "abc.execute-api.eu-west-1.amazonaws.com",
      http: { method: "GET", path: `/v1${rawPath}` },
      requestId: "req-1",
      stage: "v1",
    },
  };
  const script = `const { handler } = await import(${JSON.stringify(path.join(bundleDir, "index.mjs"))});
    process.stdout.write(JSON.stringify(await handler(${JSON.stringify(event)}, { awsRequestId: "req-1" })));`;
  const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], {
    cwd: bundleDir,
    env: { PATH: process.env.PATH ?? "", ...LAMBDA_ENV },
  });
  return JSON.parse(stdout) as { statusCode: number; headers: Record<string, string>; body: string };
}

describe("the dashboard's Lambdas on AWS", () => {
  // Inside the project (test-artifacts/ is ignored by git), so the bundle resolves the AWS SDK,
  // which the Lambda runtime provides and the bundle leaves out, from node_modules.
  let outdir: string;
  beforeAll(async () => {
    await mkdir(path.join(ROOT, "test-artifacts"), { recursive: true });
    outdir = await mkdtemp(path.join(ROOT, "test-artifacts", "dashboard-bundle-"));
  });
  afterAll(() => rm(outdir, { recursive: true, force: true }));

  it("bundle the dashboard's files beside the code, and serve them from there under a named stage", async () => {
    const app = new App({ outdir });
    const stack = new Stack(app, "Dashboard");
    const role = new Role(stack, "Role", { assumedBy: new ServicePrincipal("lambda.amazonaws.com") });
    const bundleDir = (entry: string) => {
      const { fn } = createHandlerFunction(stack, entry, {
        entry,
        functionName: `bfn-api-${entry}`,
        description: entry,
        role,
        environment: {},
        logRetention: RetentionDays.ONE_DAY,
        files: DASHBOARD_FILES,
      });
      return path.join(outdir, (fn.node.findChild("Code") as Asset).assetPath);
    };
    const pageBundle = bundleDir("dashboard");
    const assetBundle = bundleDir("dashboardAsset");
    app.synth();
    for (const bundle of [pageBundle, assetBundle]) {
      expect(readdirSync(bundle).sort()).toEqual(
        ["index.mjs", "index.mjs.map", ...DASHBOARD_FILES.map((file) => path.basename(file))].sort(),
      );
    }

    const page = await callBundle(pageBundle, "/", undefined);
    expect(page.statusCode).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    // The run bucket's origin besides (artifact downloads redirect there), from the Lambda's environment.
    expect(page.headers["content-security-policy"]).toBe(dashboardCsp(["https://bfn-run-bucket.s3.eu-west-1.amazonaws.com"]));
    expect(page.body).toContain(`<script type="module" src="/v1/dashboard/app.js"></script>`);

    const script = await callBundle(assetBundle, "/dashboard/app.js", { file: "app.js" });
    expect([script.statusCode, script.headers["content-type"]]).toEqual([200, "text/javascript; charset=utf-8"]);
    expect(script.body).toContain("sessionStorage");
    const missing = await callBundle(assetBundle, "/dashboard/nope.js", { file: "nope.js" });
    expect([missing.statusCode, JSON.parse(missing.body).error.code]).toEqual([404, "route_not_found"]);
  }, 60_000);
});
