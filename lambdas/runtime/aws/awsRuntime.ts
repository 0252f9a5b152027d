import { runnerSession } from "../../secrets/kmsSecretBox";
import { DeleteFunctionCommand, type Runtime as LambdaRuntimeName } from "@aws-sdk/client-lambda";
import { StartExecutionCommand, StopExecutionCommand } from "@aws-sdk/client-sfn";
import type { FunctionItem } from "../../functions/types";
import { ApiError } from "../../http/errors";
import type { LambdaRunEvent } from "../../runner/lambdaPackage";
import { FINAL_STATUSES, RUN_DEADLINE_MARGIN_MS, type RunItem } from "../../runs/types";
import type { RunStore } from "../../store/runStore";
import type { DeployGuard, InvokeRequest, InvokeResult, Runtime } from "../runtime";
import { guardedSend, lambdaDeployer, versionAlias } from "./deployLambda";
import { endedWithout } from "./invokeOutcome";
import { type ControlPlaneCommand, httpStatusOf, isAwsError, type LambdaClientLike, type LambdaSend } from "./lambdaClient";
import type { OutcomeBucket } from "./outcomeBucket";
import { INVOKE_MARGIN_SECONDS, type RunExecutionInput } from "./runWorkflow";

/** The Step Functions API as the adapter uses it (an SFNClient with standard retries, or a test double). */
export interface StepFunctionsLike {
  send(command: StartExecutionCommand | StopExecutionCommand): Promise<unknown>;
}

export interface AwsRuntimeOptions {
  /** The Lambda control plane's client (the SDK's standard retries): deploys and deletes. Its owner destroys it. */
  lambda: LambdaClientLike<ControlPlaneCommand>;
  /** Starts the run workflow's executions. */
  stepFunctions: StepFunctionsLike;
  /** The run workflow (runWorkflow.ts): it invokes each run's Lambda and records how it ended. */
  stateMachineArn: string;
  /** Where a function's Lambda uploads an outcome too big for the workflow (presigned URLs). */
  outcomes: Pick<OutcomeBucket, "uploadUrl" | "artifactUpload">;
  /** Where invoke reads the run's record until the workflow's recorder has made it final. */
  runs: Pick<RunStore, "get">;
  /** Prepended to the function_id to name its Lambda: at most 35 characters of [A-Za-z0-9-_]. */
  functionPrefix: string;
  /** The role every function's Lambda runs as (its logs only: no access to the service). */
  executionRoleArn: string;
  /** The execution role's unique id (AROA…): a function's secrets are sealed for its Lambda's session, `<it>:<Lambda name>`. */
  executionRoleId: string;
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
  /** Between two reads of a run's record while invoke waits for its end (default 200 ms). */
  runPollIntervalMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

/** `fn_` + 26 ULID characters. */
const FUNCTION_ID_LENGTH = 29;
const PREFIX_PATTERN = /^[A-Za-z0-9_-]*$/;
/**
 * The largest execution input (Step Functions takes 256 KB), with room for what the workflow
 * adds to the state (a throttle's error): the bound of a run's parameters on AWS.
 */
export const MAX_EXECUTION_INPUT_BYTES = 256 * 1024 - 4096;

function paramsTooLarge(bytes: number): ApiError {
  const message = `The invocation's parameters are too large to run on AWS: the run's event is ${bytes} bytes, at most ${MAX_EXECUTION_INPUT_BYTES} fit the run workflow; pass large inputs by reference (a URL)`;
  return new ApiError("payload_too_large", message, { limit: MAX_EXECUTION_INPUT_BYTES });
}

/** How long a run's upload URL stays valid beyond its timeout: the invoke margin, throttle retries and slack. */
const UPLOAD_URL_MARGIN_SECONDS = 300;

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
 * invoke: an execution of the run workflow (see `invoke` below). remove: DeleteFunction (all
 *   versions and aliases with it).
 */
export function createAwsRuntime(options: AwsRuntimeOptions): Runtime {
  const { functionPrefix } = options;
  if (!PREFIX_PATTERN.test(functionPrefix) || functionPrefix.length > 64 - FUNCTION_ID_LENGTH) {
    throw new Error(`function name prefix '${functionPrefix}' must be at most ${64 - FUNCTION_ID_LENGTH} characters of [A-Za-z0-9-_]`);
  }
  const send: LambdaSend = <Output>(command: ControlPlaneCommand) => options.lambda.send(command) as Promise<Output>;
  const sleep = options.sleep ?? defaultSleep;
  const functionName = (fn: FunctionItem) => lambdaFunctionName(functionPrefix, fn.function_id);
  const setup = {
    runtime: options.runtime ?? "nodejs22.x",
    role: options.executionRoleArn,
    layers: options.layerArns,
    logGroup: options.logGroup,
    architecture: options.architecture ?? "x86_64",
    pollIntervalMs: options.pollIntervalMs ?? 1000,
    activeTimeoutMs: options.activeTimeoutMs ?? 120_000,
    sleep,
  } as const;
  /** A deploy's calls: with a guard, each that changes the function asks it first (see DeployGuard). */
  const deployer = (guard?: DeployGuard) => lambdaDeployer(guard ? guardedSend(send, guard) : send, setup);

  const runPollIntervalMs = options.runPollIntervalMs ?? 200;

  /**
   * Reads the run's record until it is final, for as long as the run can last: its timeout and
   * RUN_DEADLINE_MARGIN_MS, past which the sweeper ends it anyway (no workflow lasts that long).
   */
  const waitForEnd = async (fn: FunctionItem, runId: string, signal?: AbortSignal): Promise<InvokeResult> => {
    const limitMs = fn.timeout_seconds * 1000 + RUN_DEADLINE_MARGIN_MS;
    for (let waited = 0; waited <= limitMs; waited += runPollIntervalMs) {
      // The caller answered without the end: nobody reads it here, the recorder writes it.
      if (signal?.aborted) return new Promise<never>(() => undefined);
      // A failed read is tried again: ending the run over it would refuse its real end.
      const run = await options.runs.get(runId).catch(() => undefined);
      // Canceled: its Lambda invocation may still run, and the slot with it (see `cancel`); the
      // caller's answer comes from the record, not from here (answering would give the slot back).
      if (run?.status === "canceled") return new Promise<never>(() => undefined);
      if (run && FINAL_STATUSES.includes(run.status)) return resultOf(run);
      await sleep(runPollIntervalMs);
    }
    const message = `No end of the run was recorded within ${Math.round(limitMs / 1000)} s: the run's workflow never recorded it`;
    return { ...endedWithout("failed", "function_crashed", message), duration_ms: 0, peak_memory_mb: null };
  };

  return {
    deploy: (fn, version, guard) => deployer(guard).deploy(functionName(fn), fn, version),

    configure: (fn, guard) => deployer(guard).configure(functionName(fn), fn),

    /**
     * Starts the run workflow (runWorkflow.ts) with an execution named after the run (one
     * execution per run: Step Functions refuses a second name) and the run's event, which
     * carries a presigned URL for an outcome too big for the workflow; then `onRunning`. The
     * workflow invokes the function's Lambda (RequestResponse) and its recorder writes the
     * run's final record and meters it. Meanwhile this reads that record every
     * runPollIntervalMs and resolves with it once it is final; the caller's own finish then
     * finds the run ended already and keeps that record (finishRun). A caller that stops
     * waiting (the sync window's 202) loses nothing: the record is written without it.
     *
     * Refusals before anything ran: parameters too large for the workflow's input (413
     * `payload_too_large`), Step Functions' own limits (ExecutionLimitExceeded, throttled past
     * the SDK's retries: 429 `concurrency_limit_exceeded`), any other 4xx (thrown as it is) but
 * ExecutionAlreadyExists (the run's own execution, started by an earlier attempt: waited for).
     * A start whose outcome is unknown (timeouts, 5xx) counts as started: the run is waited for
     * like any other, and the sweeper ends it at its deadline if no execution had it. Lambda's
     * own throttles are retried inside the workflow. `onQueued` is never called: Lambda's cold
     * starts cannot be seen from here.
     */
    async invoke(request: InvokeRequest, hooks): Promise<InvokeResult> {
      const { fn, version } = request;
      const event: LambdaRunEvent = {
        run_id: request.runId,
        params: request.params,
        timeout_ms: fn.timeout_seconds * 1000,
        outcome_upload_url: await options.outcomes.uploadUrl(request.runId, fn.timeout_seconds + UPLOAD_URL_MARGIN_SECONDS),
        artifact_upload: await options.outcomes.artifactUpload(request.runId, fn.timeout_seconds + UPLOAD_URL_MARGIN_SECONDS),
        artifacts_url: request.artifactsUrl,
        // Sealed, as stored: the function's Lambda opens them itself, so no value is in the workflow's history.
        ...(request.secrets && request.secrets.sealed.length > 0
          ? {
              secrets: {
                function_id: fn.function_id,
                runner: runnerSession(options.executionRoleId, functionName(fn)),
                items: request.secrets.sealed.map(({ name, sealed }) => ({ name, sealed })),
              },
            }
          : {}),
      };
      const input: RunExecutionInput = {
        run_id: request.runId,
        function: `${functionName(fn)}:${versionAlias(version)}`,
        timeout_seconds: fn.timeout_seconds,
        invoke_timeout_seconds: fn.timeout_seconds + INVOKE_MARGIN_SECONDS,
        event,
        throttles: 0,
      };
      const text = JSON.stringify(input);
      if (Buffer.byteLength(text) > MAX_EXECUTION_INPUT_BYTES) throw paramsTooLarge(Buffer.byteLength(text));
      const command = new StartExecutionCommand({ stateMachineArn: options.stateMachineArn, name: request.runId, input: text });
      try {
        await options.stepFunctions.send(command);
      } catch (error) {
        if (isAwsError(error, "ExecutionLimitExceeded") || isAwsError(error, "ThrottlingException")) {
          const message = "The run workflow is at its limit: the run was not started; try again shortly";
          throw new ApiError("concurrency_limit_exceeded", message, {}, { "retry-after": "1" });
        }
        if (isAwsError(error, "InvalidExecutionInput")) throw paramsTooLarge(Buffer.byteLength(text));
        // Refused outright (a 4xx: the stack's configuration): no execution started. But for
        // ExecutionAlreadyExists: the execution is named after this run, so only this run's own
        // execution takes the name — a start the SDK retried after its first attempt went
        // through, and whose execution closed meanwhile (Step Functions answers the twin of a
        // running execution idempotently, of a closed one with this 400). The run started.
        const status = httpStatusOf(error);
        const refused = status !== undefined && status >= 400 && status < 500;
        if (refused && !isAwsError(error, "ExecutionAlreadyExists")) throw error;
        // Otherwise (the SDK's retries ran out on timeouts or 5xx) the execution may have
        // started: the run stands, and its recorder or the sweeper (at its deadline) ends it.
      }
      await hooks.onRunning();
      return waitForEnd(fn, request.runId, request.signal);
    },

    /**
     * StopExecution of the run's workflow (the execution named after the run); one that has
     * ended or never started is fine. The canceller records the run `canceled` (`not_here`).
     * Lambda cannot stop an invocation in progress: it runs on until it returns or times out,
     * so the run's lease is not given back here. The recorder gives it back if the invocation
     * returned before the stop took effect; otherwise it expires at the lease's end, later than
     * the invocation can last (admitRun's lease: the function's timeout and more).
     */
    async cancel(runId) {
      const executionArn = `${options.stateMachineArn.replace(":stateMachine:", ":execution:")}:${runId}`;
      try {
        await options.stepFunctions.send(new StopExecutionCommand({ executionArn, error: CANCELED_ERROR, cause: "POST /runs/{run_id}/cancel" }));
      } catch (error) {
        if (!isAwsError(error, "ExecutionDoesNotExist")) throw error;
      }
      return "not_here";
    },

    async remove(fn) {
      try {
        await send(new DeleteFunctionCommand({ FunctionName: functionName(fn) }));
      } catch (error) {
        if (!isAwsError(error, "ResourceNotFoundException")) throw error;
      }
    },

    // Nothing runs here: the client is its owner's to destroy.
    async close() {},
  };
}

/** The error a canceled run's workflow is stopped with (its status-change event carries it). */
export const CANCELED_ERROR = "Browserfn.Canceled";

/** A final run record as the runtime's result. */
function resultOf(run: RunItem): InvokeResult {
  return {
    status: run.status === "succeeded" || run.status === "timed_out" ? run.status : "failed",
    result_json: run.result_json,
    error: run.error,
    logs: run.logs,
    duration_ms: run.duration_ms ?? 0,
    browser_ms: run.browser_ms,
    peak_memory_mb: run.peak_memory_mb,
  };
}

/** The Lambda of a function: `${functionPrefix}${function_id}`. */
export function lambdaFunctionName(functionPrefix: string, functionId: string): string {
  return `${functionPrefix}${functionId}`;
}
