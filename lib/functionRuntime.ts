import { Aws, RemovalPolicy } from "aws-cdk-lib";
import { PolicyStatement, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import { Architecture, Code, LayerVersion, Runtime } from "aws-cdk-lib/aws-lambda";
import { LogGroup, type RetentionDays } from "aws-cdk-lib/aws-logs";
import { Construct } from "constructs";
import { acknowledgeWildcards } from "./nag";
import type { LayerAssetDirs } from "./layerAssets";

export interface FunctionRuntimeProps {
  prefix: string;
  /** Name prefix of every per-function Lambda. */
  functionPrefix: string;
  layerAssets: LayerAssetDirs;
  /** How long the per-function Lambdas' logs are kept. */
  logRetention: RetentionDays;
}

export const RUNTIME_NAMES_REASON =
  "The per-function Lambdas are created at run time, one per deployed function, named " +
  "<functionPrefix><function id>: they cannot be listed in the template, so the function prefix is the narrowest scope " +
  "(`:*` covers their versions and aliases).";

/**
 * What the handlers may do to the per-function Lambdas: everything the runtime adapter's deploys
 * and deletes call. Not InvokeFunction: only the run workflow invokes them (lib/runPipeline.ts).
 */
export const CONTROL_ACTIONS = [
  "lambda:CreateFunction",
  "lambda:UpdateFunctionCode",
  "lambda:UpdateFunctionConfiguration",
  "lambda:PublishVersion",
  "lambda:CreateAlias",
  "lambda:UpdateAlias",
  "lambda:GetFunctionConfiguration",
  "lambda:DeleteFunction",
  // CreateFunction with Tags (the adapter tags each Lambda with its function and account) needs it too.
  "lambda:TagResource",
];

/**
 * Where a function's code runs on AWS: the two layers every per-function Lambda uses
 * (@sparticuz/chromium; the browserfn runner with puppeteer-core), the execution role those
 * Lambdas run with (automation code runs with it: it may write its logs and nothing else), and
 * the grants that let the handlers create, update and delete those Lambdas, and nothing else.
 */
export class FunctionRuntime extends Construct {
  readonly chromiumLayer: LayerVersion;
  readonly runtimeLayer: LayerVersion;
  readonly executionRole: Role;
  readonly functionPrefix: string;
  /** `function:<prefix>*` and its qualified form `function:<prefix>*:*` (versions, aliases). */
  readonly functionArns: string[];
  /**
   * The one log group every per-function Lambda writes to (its LoggingConfig), with the stack's
   * retention: Lambda's default group per function would be created on first use and kept
   * forever. Streams are named <date>/<function name>[<version>][<instance>].
   */
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: FunctionRuntimeProps) {
    super(scope, id);
    this.functionPrefix = props.functionPrefix;
    const functionArn = `arn:${Aws.PARTITION}:lambda:${Aws.REGION}:${Aws.ACCOUNT_ID}:function:${props.functionPrefix}*`;
    this.functionArns = [functionArn, `${functionArn}:*`];

    this.chromiumLayer = new LayerVersion(this, "ChromiumLayer", {
      layerVersionName: `${props.prefix}-chromium`,
      description: "@sparticuz/chromium (x86_64) under nodejs/node_modules, for the per-function Lambdas",
      code: Code.fromAsset(props.layerAssets.chromium),
      compatibleArchitectures: [Architecture.X86_64],
      compatibleRuntimes: [Runtime.NODEJS_22_X],
    });
    this.runtimeLayer = new LayerVersion(this, "RuntimeLayer", {
      layerVersionName: `${props.prefix}-runtime`,
      description: "The browserfn runner (nodejs/browserfn-runner.cjs): puppeteer-core and browserfn/runtime",
      code: Code.fromAsset(props.layerAssets.runtime),
      compatibleArchitectures: [Architecture.X86_64],
      compatibleRuntimes: [Runtime.NODEJS_22_X],
    });

    this.executionRole = new Role(this, "ExecutionRole", {
      assumedBy: new ServicePrincipal("lambda.amazonaws.com"),
      description: "Runs the per-function Lambdas (user automation code): opens its own secrets, nothing else (no logs)",
    });
    this.logGroup = new LogGroup(this, "FunctionLogs", {
      logGroupName: `/browserfn/${props.prefix}/functions`,
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // No CloudWatch Logs right at all (#23.4): a run is user code in the Lambda's own process, and
    // any stream it could write (this group is shared by every function: Lambda names streams
    // after the function, which IAM cannot tie to the calling function) it could forge or flood
    // for another function; a group it could create would be kept forever. What a run prints
    // comes back in the runner's answer and is kept on the run (`logs`), its crash or timeout
    // through the workflow's caught error: nothing the service shows is read from CloudWatch.
    // The group and each Lambda's LoggingConfig stay: an operator who needs Lambda's own lines
    // (START/REPORT) grants `logs:CreateLogStream` and `logs:PutLogEvents` on it by hand, knowing
    // that every function can then write every function's streams (docs/deploy.md, "Logs").
  }

  /** The layer ARNs a per-function Lambda is created with: chromium first, then the runner. */
  get layerArns(): string[] {
    return [this.chromiumLayer.layerVersionArn, this.runtimeLayer.layerVersionArn];
  }

  /** Delete the per-function Lambdas (the delete route): all the route handlers do to them on AWS. */
  grantDelete(role: Role): void {
    role.addToPolicy(new PolicyStatement({ actions: ["lambda:DeleteFunction"], resources: this.functionArns }));
    acknowledgeWildcards(role, this.functionArns, RUNTIME_NAMES_REASON);
  }

  /** Create, update, publish, alias and delete the per-function Lambdas; pass them the execution role (the deploy job). */
  grantControl(role: Role): void {
    role.addToPolicy(new PolicyStatement({ actions: CONTROL_ACTIONS, resources: this.functionArns }));
    role.addToPolicy(
      new PolicyStatement({
        actions: ["iam:PassRole"],
        resources: [this.executionRole.roleArn],
        conditions: { StringEquals: { "iam:PassedToService": "lambda.amazonaws.com" } },
      }),
    );
    role.addToPolicy(new PolicyStatement({ actions: ["lambda:GetLayerVersion"], resources: this.layerArns }));
    acknowledgeWildcards(role, this.functionArns, RUNTIME_NAMES_REASON);
  }
}
