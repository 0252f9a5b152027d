import { DeleteFunctionCommand, InvokeCommand, type Runtime as LambdaRuntimeName } from "@aws-sdk/client-lambda";
import type { FunctionItem } from "../../functions/types";
import { ApiError } from "../../http/errors";
import type { LambdaRunEvent } from "../../runner/lambdaPackage";
import type { InvokeRequest, InvokeResult, Runtime } from "../runtime";
import { lambdaDeployer, versionAlias } from "./deployLambda";
import { endedWithout, type InvokeAnswer, invokeResult } from "./invokeOutcome";
import { isAwsError, type LambdaClientLike, type LambdaSend } from "./lambdaClient";

export interface AwsRuntimeOptions {
  /**
   * A LambdaClient (or a test double). Its owner builds and destroys it. Invocations are
   * synchronous and last up to the function's timeout (≤ 900 s), so its request timeout must be
   * longer than that. The SDK retries throttles and network failures itself; a retried Invoke
   * after a network failure can run an automation twice, so `maxAttempts: 1` is the safe choice
   * (throttles are then retried here, within the run's wait budget).
   */
  lambda: LambdaClientLike;
  /** Prepended to the function_id to name its Lambda: at most 35 characters of [A-Za-z0-9-_]. */
  functionPrefix: string;
  /** The role every function's Lambda runs as (logs only: no access to the service's data). */
  executionRoleArn: string;
  /** The chromium layer and the runtime layer (see RUNNER_LAYER_PATH in runner/lambdaPackage.ts). */
  layerArns: string[];
  /** @sparticuz/chromium ships x64 only. */
  architecture?: "x86_64";
  /** Lambda runtime of the functions (default nodejs22.x). */
  runtime?: LambdaRuntimeName;
  /** Between two polls of the function's state while a deploy waits (default 1000 ms). */
  pollIntervalMs?: number;
  /** How long a deploy waits for Lambda to make the function Active (default 120 s). */
  activeTimeoutMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

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
 *   later:     UpdateFunctionCode (Publish false), then, when memory, timeout, runtime, role or
 *              layers differ from the function's, UpdateFunctionConfiguration;
 *   each change is followed by polls of GetFunctionConfiguration until State is Active and
 *   LastUpdateStatus Successful (an update that meets another in progress waits, then retries
 *   once); then PublishVersion (guarded by the zip's CodeSha256), CreateAlias `vN` (UpdateAlias
 *   if it exists) and CreateAlias `live` for a new function, UpdateAlias `live` otherwise.
 *   Lambda reporting Failed, or not Active within activeTimeoutMs, gives `failed` and the reason.
 * configure(fn): UpdateFunctionConfiguration + wait + PublishVersion, then UpdateAlias `vN`
 *   (N = latest_version) and `live`: older versions keep the settings they were published with.
 *   It and deploy must not run at the same time for one function.
 * invoke: see `invoke` below. remove: DeleteFunction (all versions and aliases with it).
 */
export function createAwsRuntime(options: AwsRuntimeOptions): Runtime {
  const { lambda, functionPrefix } = options;
  if (!PREFIX_PATTERN.test(functionPrefix) || functionPrefix.length > 64 - FUNCTION_ID_LENGTH) {
    throw new Error(`function name prefix '${functionPrefix}' must be at most ${64 - FUNCTION_ID_LENGTH} characters of [A-Za-z0-9-_]`);
  }
  const send: LambdaSend = <Output>(command: Parameters<LambdaClientLike["send"]>[0]) => lambda.send(command) as Promise<Output>;
  const sleep = options.sleep ?? defaultSleep;
  const functionName = (fn: FunctionItem) => `${functionPrefix}${fn.function_id}`;
  const deployer = lambdaDeployer(send, {
    runtime: options.runtime ?? "nodejs22.x",
    role: options.executionRoleArn,
    layers: options.layerArns,
    architecture: options.architecture ?? "x86_64",
    pollIntervalMs: options.pollIntervalMs ?? 1000,
    activeTimeoutMs: options.activeTimeoutMs ?? 120_000,
    sleep,
  });

  /** Invokes; a throttled Invoke is tried again with backoff while `waitMs` lasts, then 429. */
  const invokeLambda = async (command: InvokeCommand, waitMs: number): Promise<{ answer: InvokeAnswer; duration_ms: number }> => {
    let waited = 0;
    for (let delay = FIRST_THROTTLE_DELAY_MS; ; delay = Math.min(delay * 2, MAX_THROTTLE_DELAY_MS)) {
      const started = performance.now();
      try {
        const answer = await send<InvokeAnswer>(command);
        return { answer, duration_ms: Math.round(performance.now() - started) };
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

  return {
    deploy: (fn, version) => deployer.deploy(functionName(fn), fn, version),

    configure: (fn) => deployer.configure(functionName(fn), fn),

    /**
     * `onRunning` first, then a synchronous Invoke of alias `v<version>` with
     * `{ run_id, params, timeout_ms }`. The hook comes first because the run's record must exist
     * while the run goes on (an invocation may outlast the sync window), and Lambda only answers
     * when the run is over. So, unlike the local runtime, a throttled Invoke (Lambda's
     * concurrency limit) meets a run that already exists: it is retried within `waitMs`, then
     * 429 `concurrency_limit_exceeded` is thrown, and the caller settles that run.
     * `onQueued` is never called: Lambda's cold starts cannot be seen from here.
     */
    async invoke(request: InvokeRequest, hooks): Promise<InvokeResult> {
      const { fn, version } = request;
      const event: LambdaRunEvent = { run_id: request.runId, params: request.params, timeout_ms: fn.timeout_seconds * 1000 };
      const command = new InvokeCommand({
        FunctionName: functionName(fn),
        Qualifier: versionAlias(version),
        InvocationType: "RequestResponse",
        LogType: "Tail",
        Payload: JSON.stringify(event),
      });
      await hooks.onRunning();
      try {
        const { answer, duration_ms } = await invokeLambda(command, request.waitMs);
        return invokeResult(answer, fn, duration_ms);
      } catch (error) {
        if (!isAwsError(error, "ResourceNotFoundException")) throw error;
        const message = `The function is not deployed: Lambda has no ${functionName(fn)}:${versionAlias(version)}`;
        return { ...endedWithout("failed", "function_crashed", message), duration_ms: 0, peak_memory_mb: null };
      }
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
