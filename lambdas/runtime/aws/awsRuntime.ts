import {
  DeleteFunctionCommand,
  InvokeCommand,
  PutFunctionEventInvokeConfigCommand,
  type Runtime as LambdaRuntimeName,
} from "@aws-sdk/client-lambda";
import type { FunctionItem } from "../../functions/types";
import { ApiError } from "../../http/errors";
import type { LambdaRunEvent } from "../../runner/lambdaPackage";
import { FINAL_STATUSES, type RunItem } from "../../runs/types";
import type { RunStore } from "../../store/runStore";
import type { InvokeRequest, InvokeResult, Runtime } from "../runtime";
import { lambdaDeployer, versionAlias } from "./deployLambda";
import { endedWithout } from "./invokeOutcome";
import { type ControlPlaneCommand, isAwsError, type LambdaClientLike, type LambdaClients, type LambdaSend } from "./lambdaClient";

export interface AwsRuntimeOptions {
  /**
   * The clients from createLambdaClients: the control plane's, which the SDK retries, and
   * Invoke's, which it must not (a retried Invoke can queue a run twice; throttles are retried
   * here, within the run's wait budget). A single client stands for both only when it never
   * retries (a test double). Their owner builds and destroys them.
   */
  lambda: LambdaClients | LambdaClientLike;
  /** Where invoke reads the run's record until the run-completion Lambda has made it final. */
  runs: Pick<RunStore, "get">;
  /** The run-completion Lambda: every function's async-invocation destination (see recordCompletion.ts). */
  completionArn: string;
  /** Prepended to the function_id to name its Lambda: at most 35 characters of [A-Za-z0-9-_]. */
  functionPrefix: string;
  /** The role every function's Lambda runs as (logs only: no access to the service's data). */
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
  /** Between two reads of a run's record while invoke waits for its end (default 200 ms). */
  runPollIntervalMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * How long Lambda keeps an Event invocation it could not start yet (throttled): Lambda's
 * minimum. Past it the event goes to the destination as `EventAgeExceeded` and the run ends as
 * refused.
 */
export const MAX_EVENT_AGE_SECONDS = 60;
/** Beyond the function's timeout and the event's age: a cold start and the recorder's own delivery. */
const COMPLETION_MARGIN_MS = 60_000;

/** `fn_` + 26 ULID characters. */
const FUNCTION_ID_LENGTH = 29;
const PREFIX_PATTERN = /^[A-Za-z0-9_-]*$/;
const FIRST_THROTTLE_DELAY_MS = 100;
const MAX_THROTTLE_DELAY_MS = 1000;

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
 * configure(fn): UpdateFunctionConfiguration + wait + PublishVersion, then UpdateAlias `vN`
 *   (N = latest_version) and `live`: older versions keep the settings they were published with.
 *   It and deploy must not run at the same time for one function.
 * After each deploy, PutFunctionEventInvokeConfig on alias `vN`: no retries (a retry would run the
 *   automation again), events dropped after MAX_EVENT_AGE_SECONDS, and the run-completion Lambda
 *   as the destination on success and on failure.
 * invoke: see `invoke` below. remove: DeleteFunction (all versions, aliases and configs with it).
 */
export function createAwsRuntime(options: AwsRuntimeOptions): Runtime {
  const { functionPrefix } = options;
  if (!PREFIX_PATTERN.test(functionPrefix) || functionPrefix.length > 64 - FUNCTION_ID_LENGTH) {
    throw new Error(`function name prefix '${functionPrefix}' must be at most ${64 - FUNCTION_ID_LENGTH} characters of [A-Za-z0-9-_]`);
  }
  const { controlPlane, invoke: invoker } = "send" in options.lambda ? { controlPlane: options.lambda, invoke: options.lambda } : options.lambda;
  const send: LambdaSend = <Output>(command: ControlPlaneCommand) => controlPlane.send(command) as Promise<Output>;
  const sleep = options.sleep ?? defaultSleep;
  const functionName = (fn: FunctionItem) => `${functionPrefix}${fn.function_id}`;
  const deployer = lambdaDeployer(send, {
    runtime: options.runtime ?? "nodejs22.x",
    role: options.executionRoleArn,
    layers: options.layerArns,
    logGroup: options.logGroup,
    architecture: options.architecture ?? "x86_64",
    pollIntervalMs: options.pollIntervalMs ?? 1000,
    activeTimeoutMs: options.activeTimeoutMs ?? 120_000,
    sleep,
  });

  const runPollIntervalMs = options.runPollIntervalMs ?? 200;

  /** Invokes; a throttled Invoke is tried again with backoff while `waitMs` lasts, then 429. */
  const invokeLambda = async (command: InvokeCommand, waitMs: number): Promise<void> => {
    let waited = 0;
    for (let delay = FIRST_THROTTLE_DELAY_MS; ; delay = Math.min(delay * 2, MAX_THROTTLE_DELAY_MS)) {
      try {
        await invoker.send(command);
        return;
      } catch (error) {
        if (!isAwsError(error, "TooManyRequestsException")) throw error;
        if (waited + delay > waitMs) {
          const message = "Lambda is at its concurrency limit: the run was not started; try again shortly";
          throw new ApiError("concurrency_limit_exceeded", message, {}, { "retry-after": "1" });
        }
      }
      await sleep(delay);
      waited += delay;
    }
  };

  /**
   * Reads the run's record until it is final, for as long as the run can last: its timeout, the
   * event's time in Lambda's queue and a margin. Past that no completion will come (the
   * destination is missing or failed): the run is ended as crashed by the caller.
   */
  const waitForEnd = async (fn: FunctionItem, runId: string): Promise<InvokeResult> => {
    const limitMs = (fn.timeout_seconds + MAX_EVENT_AGE_SECONDS) * 1000 + COMPLETION_MARGIN_MS;
    for (let waited = 0; waited <= limitMs; waited += runPollIntervalMs) {
      // A failed read is tried again: ending the run over it would refuse its real end.
      const run = await options.runs.get(runId).catch(() => undefined);
      if (run && FINAL_STATUSES.includes(run.status)) return resultOf(run);
      await sleep(runPollIntervalMs);
    }
    const message = `No end of the run was recorded within ${Math.round(limitMs / 1000)} s: the function's completion never reached the service`;
    return { ...endedWithout("failed", "function_crashed", message), duration_ms: limitMs, peak_memory_mb: null };
  };

  return {
    async deploy(fn, version) {
      const deployed = await deployer.deploy(functionName(fn), fn, version);
      if (deployed.status !== "active") return deployed;
      const destination = { Destination: options.completionArn };
      await send(
        new PutFunctionEventInvokeConfigCommand({
          FunctionName: functionName(fn),
          Qualifier: versionAlias(version.version),
          MaximumRetryAttempts: 0,
          MaximumEventAgeInSeconds: MAX_EVENT_AGE_SECONDS,
          DestinationConfig: { OnSuccess: destination, OnFailure: destination },
        }),
      );
      return deployed;
    },

    configure: (fn) => deployer.configure(functionName(fn), fn),

    /**
     * An asynchronous Invoke (InvocationType `Event`) of alias `v<version>` with
     * `{ run_id, params, timeout_ms, completion_token }` (the caller wrote the run's queued
     * record before), then `onRunning` once Lambda has the event. Lambda queues the event and answers at once; when the
     * run ends, Lambda hands its answer to the run-completion Lambda (the alias's destination),
     * which writes the run's final record and meters it. Meanwhile this reads that record every
     * runPollIntervalMs and resolves with it once it is final; the caller's own finish then
     * finds the run ended already and keeps that record (finishRun). A caller that stops
     * waiting (the sync window's 202) loses nothing: the record is written without it.
     *
     * A throttled Invoke (rare: Lambda queues Event invocations) is retried within `waitMs`,
     * then 429 `concurrency_limit_exceeded` is thrown, and the caller settles the run.
     * `onQueued` is never called: Lambda's cold starts cannot be seen from here.
     */
    async invoke(request: InvokeRequest, hooks): Promise<InvokeResult> {
      const { fn, version } = request;
      const event: LambdaRunEvent = {
        run_id: request.runId,
        params: request.params,
        timeout_ms: fn.timeout_seconds * 1000,
        completion_token: request.completionToken,
      };
      const command = new InvokeCommand({
        FunctionName: functionName(fn),
        Qualifier: versionAlias(version),
        InvocationType: "Event",
        Payload: JSON.stringify(event),
      });
      try {
        await invokeLambda(command, request.waitMs);
      } catch (error) {
        if (isAwsError(error, "ResourceNotFoundException")) {
          const message = `The function is not deployed: Lambda has no ${functionName(fn)}:${versionAlias(version)}`;
          return { ...endedWithout("failed", "function_crashed", message), duration_ms: 0, peak_memory_mb: null };
        }
        if (error instanceof ApiError) throw error; // throttled: the run never started
        // Any other failure leaves it unknown whether Lambda has the event: the run stands.
        await hooks.onRunning();
        throw error;
      }
      await hooks.onRunning();
      return waitForEnd(fn, request.runId);
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
