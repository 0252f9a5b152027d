import path from "node:path";
import { Duration, RemovalPolicy } from "aws-cdk-lib";
import { type IRole, PolicyStatement } from "aws-cdk-lib/aws-iam";
import { Architecture, Runtime } from "aws-cdk-lib/aws-lambda";
import { type BundlingOptions, LogLevel, NodejsFunction, OutputFormat } from "aws-cdk-lib/aws-lambda-nodejs";
import { type ILogGroup, LogGroup, type RetentionDays } from "aws-cdk-lib/aws-logs";
import type { Construct } from "constructs";
import { ANALYSIS_WORKER_BUNDLE, analysisWorkerBundleArgs } from "../lambdas/code/analysis/analysisWorkerScript";

export const PROJECT_ROOT = path.resolve(__dirname, "..");
/** One small entry module per Lambda: `lambdas/aws/entries/<name>.ts`. */
export const ENTRIES_DIR = path.join(PROJECT_ROOT, "lambdas", "aws", "entries");

/** The handlers' runtime. The code supports Node 20 and 22; see the L1 acknowledgement in handlers.ts. */
export const HANDLER_RUNTIME = Runtime.NODEJS_22_X;

/**
 * What the handlers' bundles leave out: nothing (#23.12). The AWS SDK is bundled, the version
 * package-lock.json pins and the tests run, not the Lambda runtime's (which changes under the
 * stack); each bundle holds only the clients its entry's imports reach
 * (test/unit/stackBundles.test.ts counts them).
 */
export const HANDLER_EXTERNAL_MODULES: readonly string[] = [];

/** Defines `require`, `__filename` and `__dirname` for the CommonJS code bundled into a handler's ES module. */
export const HANDLER_BANNER = [
  "import { createRequire as __bfnCreateRequire } from 'node:module';",
  "import { fileURLToPath as __bfnFileURLToPath } from 'node:url';",
  "import { dirname as __bfnDirname } from 'node:path';",
  "const require = __bfnCreateRequire(import.meta.url);",
  "const __filename = __bfnFileURLToPath(import.meta.url);",
  "const __dirname = __bfnDirname(__filename);",
].join(" ");

/**
 * esbuild on this machine, never Docker: ES module output (the Lambda loads `index.mjs`),
 * with `require`, `__filename` and `__dirname` provided for the CommonJS packages bundled into
 * it, the AWS SDK among them (HANDLER_EXTERNAL_MODULES).
 */
const BUNDLING: BundlingOptions = {
  forceDockerBundling: false,
  format: OutputFormat.ESM,
  target: "node22",
  mainFields: ["module", "main"],
  externalModules: [...HANDLER_EXTERNAL_MODULES],
  minify: true,
  sourceMap: true,
  sourcesContent: false,
  // CommonJS code bundled into the ES module (the TypeScript compiler among it) expects these.
  banner: HANDLER_BANNER,
  logLevel: LogLevel.ERROR,
};

export interface HandlerFunctionProps {
  /** The entry module's name in lambdas/aws/entries (without `.ts`). */
  entry: string;
  functionName: string;
  description: string;
  /** Possibly shared by several handlers; grant it its log group with grantLogWrites. */
  role: IRole;
  environment: Record<string, string>;
  logRetention: RetentionDays;
  timeout?: Duration;
  memorySize?: number;
  /** Files the handler reads at run time (relative to the project root), copied into the bundle's root. */
  files?: readonly string[];
  /**
   * The handler reads deployed code: the analysis worker (lambdas/code/analysis) is bundled
   * beside its code, as ANALYSIS_WORKER_BUNDLE, for the worker thread it starts.
   */
  analysisWorker?: boolean;
}

/**
 * One of browserfn's own Lambdas (a route handler, the authorizer, the scheduled-run target):
 * bundled from its entry module alone, arm64, with its own log group (so that its role may be
 * granted that group only, and the group goes with the stack).
 */
export function createHandlerFunction(scope: Construct, id: string, props: HandlerFunctionProps): { fn: NodejsFunction; logGroup: LogGroup } {
  const logGroup = new LogGroup(scope, `${id}Logs`, {
    logGroupName: `/aws/lambda/${props.functionName}`,
    retention: props.logRetention,
    removalPolicy: RemovalPolicy.DESTROY,
  });
  const fn = new NodejsFunction(scope, id, {
    entry: path.join(ENTRIES_DIR, `${props.entry}.ts`),
    handler: "handler",
    functionName: props.functionName,
    description: props.description,
    runtime: HANDLER_RUNTIME,
    architecture: Architecture.ARM_64,
    memorySize: props.memorySize ?? 512,
    timeout: props.timeout ?? Duration.seconds(29),
    role: props.role,
    logGroup,
    environment: { ...props.environment, NODE_OPTIONS: "--enable-source-maps" },
    projectRoot: PROJECT_ROOT,
    depsLockFilePath: path.join(PROJECT_ROOT, "package-lock.json"),
    bundling: props.files?.length || props.analysisWorker ? { ...BUNDLING, commandHooks: afterBundling(props.files ?? [], props.analysisWorker ?? false) } : BUNDLING,
  });
  return { fn, logGroup };
}

/**
 * Bundling hooks that copy `files` (relative to the project root) into the bundle's root, beside
 * `index.mjs`, and with `analysisWorker` bundle the analysis worker there too (local esbuild).
 */
function afterBundling(files: readonly string[], analysisWorker: boolean): NonNullable<BundlingOptions["commandHooks"]> {
  const quote = (value: string) => `'${value.replace(/'/g, "'\\''")}'`;
  return {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (inputDir, outputDir) => [
      ...(files.length > 0 ? [`cp ${files.map((file) => quote(path.join(inputDir, file))).join(" ")} ${quote(outputDir)}`] : []),
      ...(analysisWorker
        ? [[path.join(inputDir, "node_modules", ".bin", "esbuild"), ...analysisWorkerBundleArgs(inputDir, path.join(outputDir, ANALYSIS_WORKER_BUNDLE))].map(quote).join(" ")]
        : []),
    ],
  };
}

/** Lets a role write to these log groups (one statement, however many handlers share the role). */
export function grantLogWrites(role: IRole, logGroups: ILogGroup[]): void {
  if (logGroups.length === 0) return;
  role.addToPrincipalPolicy(
    new PolicyStatement({ actions: ["logs:CreateLogStream", "logs:PutLogEvents"], resources: logGroups.map((group) => group.logGroupArn) }),
  );
}
