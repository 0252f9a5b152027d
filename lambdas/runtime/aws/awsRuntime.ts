import { DeleteFunctionCommand, type Runtime as LambdaRuntimeName } from "@aws-sdk/client-lambda";
import { StopExecutionCommand } from "@aws-sdk/client-sfn";
import type { FunctionItem } from "../../functions/types";
import type { DeployGuard, Runtime } from "../runtime";
import { guardedSend, lambdaDeployer } from "./deployLambda";
import { type ControlPlaneCommand, isAwsError, type LambdaClientLike, type LambdaSend } from "./lambdaClient";
import { createRunStarter, executionName, lambdaFunctionName, type RunStarterOptions } from "./runExecutions";
import { createQueuedEndWatch } from "./runEnds/queuedRunEnd";

export { lambdaFunctionName, MAX_EXECUTION_INPUT_BYTES, type StepFunctionsLike } from "./runExecutions";

/** The run starter's options (runExecutions.ts), and the Lambda control plane's for deploys. */
export interface AwsRuntimeOptions extends RunStarterOptions {
  /** The Lambda control plane's client (the SDK's standard retries): deploys and deletes. Its owner destroys it. */
  lambda: LambdaClientLike<ControlPlaneCommand>;
  /** The role every function's Lambda runs as (its logs only: no access to the service). */
  executionRoleArn: string;
  /** The chromium layer and the runtime layer (see RUNNER_LAYER_PATH in runner/lambdaPackage.ts). */
  layerArns: string[];
  /** The CloudWatch log group of every function's Lambda (the stack's, with its retention). */
  logGroup: string;
  /** @sparticuz/chromium ships x64 only. */
  architecture?: "x86_64";
  /** Lambda runtime of the functions (default nodejs22.x). */
  runtime?: LambdaRuntimeName;
  /** Between two polls of the function's state while a deploy waits (default 1000 ms). */
  pollIntervalMs?: number;
  /** How long a deploy waits for Lambda to make the function Active (default 120 s). */
  activeTimeoutMs?: number;
  /** The live view's watcher (lambdas/live/aws/s3LiveWatch.ts); absent: the live route carries no frames. */
  watchFrames?: Runtime["watchFrames"];
}

/** `fn_` + 26 ULID characters. */
const FUNCTION_ID_LENGTH = 29;
const PREFIX_PATTERN = /^[A-Za-z0-9_-]*$/;
const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The AWS runtime adapter: one Lambda per function, named `${functionPrefix}${function_id}`,
 * whose zip holds the version's compiled code and whose handler is the runner from the runtime
 * layer. Each browserfn version N is a published Lambda version behind the alias `vN`; the alias
 * `live` follows the latest version. Lambda scales the function; this adapter holds nothing.
 *
 * deploy(fn, version):
 *   version 1: CreateFunction (Publish false) — if it exists already (a retried deploy), the
 *              update path below instead;
 *   later:     UpdateFunctionCode (Publish false), then, when memory, timeout, /tmp size
 *              (EPHEMERAL_STORAGE_MB), runtime, role, layers or log group differ from the
 *              function's, UpdateFunctionConfiguration;
 *   each change is followed by polls of GetFunctionConfiguration until State is Active and
 *   LastUpdateStatus Successful (an update that meets another in progress waits, then retries
 *   once); then PublishVersion (guarded by the zip's CodeSha256), CreateAlias `vN` (UpdateAlias
 *   if it exists) and CreateAlias `live` for a new function, UpdateAlias `live` otherwise.
 *   Lambda reporting Failed, or not Active within activeTimeoutMs, gives `failed` and the reason.
 *   On AWS deploys run in the deploy-job Lambda, off the request path.
 * configure(fn): UpdateFunctionConfiguration + wait + PublishVersion, then UpdateAlias `vN`
 *   (N = latest_version) and `live`: older versions keep the settings they were published with.
 *   It and deploy must not run at the same time for one function: the deploy job's guard stops
 *   a superseded job before its next change (DeployGuard), and a deploy is started again only
 *   once no job can still run (STALE_DEPLOY_MS).
 * invoke: an execution of the run workflow (createRunStarter in runExecutions.ts). remove: DeleteFunction (all
 *   versions and aliases with it).
 */
export function createAwsRuntime(options: AwsRuntimeOptions): Runtime {
  const sleep = options.sleep ?? defaultSleep;
  return {
    ...awsFunctionDeploys(options),
    // An execution of the run workflow (runExecutions.ts).
    invoke: createRunStarter({ ...options, sleep }),
    // A sync call's queued run is started elsewhere: its end comes to the call's wait queue too (runEnds/queuedRunEnd.ts).
    ...(options.endNotices ? { watchQueuedEnd: createQueuedEndWatch({ endNotices: options.endNotices, runs: options.runs }) } : {}),
    // Frames through the run bucket: a watch marker, the run's latest frame (lambdas/live/aws).
    ...(options.watchFrames ? { watchFrames: options.watchFrames } : {}),
    // A failed attempt is queued again by the run recorder (recordRetry.ts, docs/deploy.md "Retries on AWS").
    retries: true,
    // A canceled run's Lambda invocation runs on: its slot stays taken until its lease lapses (awsRunCancel).
    canceledRunsRunOn: true,
    cancel: awsRunCancel(options),
    // Nothing runs here: the clients are their owner's to destroy.
    async close() {},
  };
}

/** What a function's Lambda is provisioned with: the Lambda control plane alone (a deploy's and a delete's parts of createAwsRuntime). */
export type FunctionDeployOptions = Pick<
  AwsRuntimeOptions,
  "lambda" | "functionPrefix" | "executionRoleArn" | "layerArns" | "logGroup" | "architecture" | "runtime" | "pollIntervalMs" | "activeTimeoutMs" | "sleep"
>;

/**
 * deploy, configure and remove of createAwsRuntime: the Lambda control plane only, so that a
 * Lambda that provisions functions but starts no run (the deploy job, the function routes)
 * bundles the Lambda client and not Step Functions' (#23.12).
 */
export function awsFunctionDeploys(options: FunctionDeployOptions): Pick<Runtime, "deploy" | "configure" | "remove"> {
  const { functionPrefix } = options;
  if (!PREFIX_PATTERN.test(functionPrefix) || functionPrefix.length > 64 - FUNCTION_ID_LENGTH) {
    throw new Error(`function name prefix '${functionPrefix}' must be at most ${64 - FUNCTION_ID_LENGTH} characters of [A-Za-z0-9-_]`);
  }
  const send: LambdaSend = <Output>(command: ControlPlaneCommand) => options.lambda.send(command) as Promise<Output>;
  const functionName = (fn: FunctionItem) => lambdaFunctionName(functionPrefix, fn.function_id);
  const setup = {
    runtime: options.runtime ?? "nodejs22.x",
    role: options.executionRoleArn,
    layers: options.layerArns,
    logGroup: options.logGroup,
    architecture: options.architecture ?? "x86_64",
    pollIntervalMs: options.pollIntervalMs ?? 1000,
    activeTimeoutMs: options.activeTimeoutMs ?? 120_000,
    sleep: options.sleep ?? defaultSleep,
  } as const;
  /** A deploy's calls: with a guard, each that changes the function asks it first (see DeployGuard). */
  const deployer = (guard?: DeployGuard) => lambdaDeployer(guard ? guardedSend(send, guard) : send, setup);
  return {
    deploy: (fn, version, guard) => deployer(guard).deploy(functionName(fn), fn, version),
    configure: (fn, guard) => deployer(guard).configure(functionName(fn), fn),
    async remove(fn) {
      try {
        await send(new DeleteFunctionCommand({ FunctionName: functionName(fn) }));
      } catch (error) {
        if (!isAwsError(error, "ResourceNotFoundException")) throw error;
      }
    },
  };
}

/**
 * StopExecution of the run's workflow (the execution named after the run); one that has
 * ended or never started is fine. The canceller records the run `canceled` (`not_here`).
 * Lambda cannot stop an invocation in progress: it runs on until it returns or times out,
 * so the run's lease is not given back here. The recorder gives it back if the invocation
 * returned before the stop took effect; otherwise it expires at the lease's end, later than
 * the invocation can last (admitRun's lease: the function's timeout and more).
 * Step Functions alone: the cancel route bundles no other client (#23.12).
 */
export function awsRunCancel(options: Pick<AwsRuntimeOptions, "stepFunctions" | "stateMachineArn" | "runs">): NonNullable<Runtime["cancel"]> {
  return async (runId) => {
    // The execution of the run's current attempt (a run waiting for its next one has none running: that one never starts).
    const attempt = (await options.runs.get(runId).catch(() => undefined))?.attempt ?? 1;
    const executionArn = `${options.stateMachineArn.replace(":stateMachine:", ":execution:")}:${executionName(runId, attempt)}`;
    try {
      await options.stepFunctions.send(new StopExecutionCommand({ executionArn, error: CANCELED_ERROR, cause: "POST /runs/{run_id}/cancel" }));
    } catch (error) {
      if (!isAwsError(error, "ExecutionDoesNotExist")) throw error;
    }
    return "not_here";
  };
}

/** The error a canceled run's workflow is stopped with (its status-change event carries it). */
export const CANCELED_ERROR = "Browserfn.Canceled";
