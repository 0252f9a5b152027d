import { recordingModeOf } from "../../recording/recordingMode";
import { type DescribeExecutionCommand, StartExecutionCommand, type StopExecutionCommand } from "@aws-sdk/client-sfn";
import { proxyOf } from "../../proxy/proxySettings";
import type { FunctionItem } from "../../functions/types";
import { ApiError } from "../../http/errors";
import type { LambdaRunEvent, RunProfileGrant, SealedSecrets } from "../../runner/lambdaPackage";
import type { RunDataKeys } from "../../secrets/runEnvelope/runDataKeys";
import { type GrantDeps, grantRunProfiles } from "../../profiles/aws/grantRunProfiles";
import type { ProfileObjects } from "../../profiles/aws/profileObjects";
import { releaseRunProfiles, type RecordProfilesDeps } from "../../profiles/aws/recordRunProfiles";
import { FINAL_STATUSES, RUN_DEADLINE_MARGIN_MS, type RunItem } from "../../runs/types";
import { runnerSession } from "../../secrets/kmsSecretBox";
import type { RunStore } from "../../store/runStore";
import type { InvokeHooks, InvokeRequest, InvokeResult, Runtime } from "../runtime";
import { versionAlias } from "./deployLambda";
import { endedWithout } from "./invokeOutcome";
import { httpStatusOf, isAwsError } from "./lambdaClient";
import type { OutcomeBucket } from "./outcomeBucket";
import { INVOKE_MARGIN_SECONDS, type RunExecutionInput } from "./runWorkflow";
import type { RunEndNotices, RunEndWatch } from "./runEnds/runEndWaiter";

type ReleaseProfilesStore = RecordProfilesDeps["store"];

/** The Step Functions API as the adapter uses it (an SFNClient with standard retries, or a test double). */
export interface StepFunctionsLike {
  send(command: StartExecutionCommand | StopExecutionCommand | DescribeExecutionCommand): Promise<unknown>;
}

/**
 * The name of a run's execution: its run id for the first attempt, `<run id>-attempt-<n>` for
 * each next one (lambdas/retries): one execution per attempt, and a repeated start of an
 * attempt is the same execution.
 */
export function executionName(runId: string, attempt = 1): string {
  return attempt > 1 ? `${runId}-attempt-${attempt}` : runId;
}

/** The run and attempt an execution's name stands for (executionName's inverse). */
export function runOfExecution(name: string): { runId: string; attempt: number } {
  const match = /^(.+)-attempt-([0-9]{1,2})$/.exec(name);
  return match ? { runId: match[1] as string, attempt: Number(match[2]) } : { runId: name, attempt: 1 };
}

/** What starting runs on AWS needs: no Lambda control plane (the recorder and the sweeper start queued runs with this alone). */
export interface RunStarterOptions {
  /** Starts the run workflow's executions. */
  stepFunctions: StepFunctionsLike;
  /** The run workflow (runWorkflow.ts): it invokes each run's Lambda and records how it ended. */
  stateMachineArn: string;
  /** Where a function's Lambda uploads an outcome too big for the workflow (presigned URLs). */
  outcomes: Pick<OutcomeBucket, "uploads">;
  /** Where invoke reads the run's record until the workflow's recorder has made it final. */
  runs: Pick<RunStore, "get">;
  /**
   * Profiles' states in the run bucket and what the store keeps of them: a run that may open
   * profiles gets their URLs in its event, and the writer's leases are taken before it starts
   * (lambdas/profiles/aws). Absent: runs open no profile.
   */
  profiles?: { store: GrantDeps["store"] & ReleaseProfilesStore; objects: ProfileObjects };
  /** Prepended to the function_id to name its Lambda. */
  functionPrefix: string;
  /** The execution role's unique id (AROA…): a function's secrets are sealed for its Lambda's session, `<it>:<Lambda name>`. */
  executionRoleId: string;
  /**
   * A fixed interval between two reads of a run's record while invoke waits for its end (the
   * in-process stand-ins of the tests). Absent: the reads back off (RUN_READS), so a waiting
   * caller reads the record a bounded number of times whatever the run's length.
   */
  runPollIntervalMs?: number;
  /**
   * Where a waiting caller hears of its run's end (a wait queue of this container, notified by
   * the recorder: runEnds/runEndWaiter.ts), so that it reads the run's record once instead of
   * polling it. Absent, or when the queue cannot be had: the record is read, backing off (RUN_READS).
   */
  endNotices?: RunEndNotices;
  /**
   * Seals a run's secret values under the function's data key (lambdas/secrets/runEnvelope), so
   * its Lambda opens them with one KMS Decrypt. Absent: only each secret's own sealed value goes.
   */
  runDataKeys?: RunDataKeys;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * How long before its window's end a caller that heard nothing reads the run's record once:
 * room for that read before the caller answers 202.
 */
export const FINAL_READ_MARGIN_MS = 250;

/**
 * The largest execution input (Step Functions takes 256 KB), with room for what the workflow
 * adds to the state (a throttle's error): the bound of a run's parameters on AWS.
 */
export const MAX_EXECUTION_INPUT_BYTES = 256 * 1024 - 4096;

function paramsTooLarge(bytes: number): ApiError {
  const message = `The invocation's parameters are too large to run on AWS: the run's event is ${bytes} bytes, at most ${MAX_EXECUTION_INPUT_BYTES} fit the run workflow; pass large inputs by reference (a URL)`;
  return new ApiError("payload_too_large", message, { limit: MAX_EXECUTION_INPUT_BYTES });
}

/**
 * When a waiting caller reads the run's record: 200 ms after the start, then each wait half as
 * long again, at most 1.5 s apart. A sync call's 25 s window takes at most 20 reads (it took 125
 * at a fixed 200 ms), a 10 s run about 10, and an end is seen at most 1.5 s late. The reads stop
 * when the caller does (its window's 202), so a run's length past the window costs nothing.
 */
export const RUN_READS = { firstMs: 200, maxMs: 1500, growth: 1.5 } as const;

/** How long a run's upload URL stays valid beyond its timeout: the invoke margin, throttle retries and slack. */
const UPLOAD_URL_MARGIN_SECONDS = 300;

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The Lambda of a function: `${functionPrefix}${function_id}`. */
export function lambdaFunctionName(functionPrefix: string, functionId: string): string {
  return `${functionPrefix}${functionId}`;
}

/** The AWS runtime's `invoke`: a run is an execution of the run workflow. */
export function createRunStarter(options: RunStarterOptions): Runtime["invoke"] {
  const sleep = options.sleep ?? defaultSleep;
  const functionName = (fn: FunctionItem) => lambdaFunctionName(options.functionPrefix, fn.function_id);
  const reads = options.runPollIntervalMs === undefined ? RUN_READS : { firstMs: options.runPollIntervalMs, maxMs: options.runPollIntervalMs, growth: 1 };

  /**
   * Reads the run's record until it is final, for as long as the run can last: its timeout and
   * RUN_DEADLINE_MARGIN_MS, past which the sweeper ends it anyway (no workflow lasts that long).
   */
  const waitForEnd = async (fn: FunctionItem, runId: string, signal?: AbortSignal): Promise<InvokeResult> => {
    const limitMs = fn.timeout_seconds * 1000 + RUN_DEADLINE_MARGIN_MS;
    for (let waited = 0, delay = reads.firstMs; waited <= limitMs; waited += delay, delay = Math.min(reads.maxMs, Math.round(delay * reads.growth))) {
      // The caller answered without the end: nobody reads it here, the recorder writes it.
      if (signal?.aborted) return new Promise<never>(() => undefined);
      // A failed read is tried again: ending the run over it would refuse its real end.
      const run = await options.runs.get(runId).catch(() => undefined);
      // Canceled too: its caller answers it (409 run_canceled); its Lambda invocation may still
      // run, and its slot stays taken (Runtime.canceledRunsRunOn).
      if (run && FINAL_STATUSES.includes(run.status)) return resultOf(run);
      await sleep(delay);
    }
    const message = `No end of the run was recorded within ${Math.round(limitMs / 1000)} s: the run's workflow never recorded it`;
    return { ...endedWithout("failed", "function_crashed", message), duration_ms: 0, peak_memory_mb: null };
  };

  /**
   * Waits for the run's end notice for the caller's window (`waitMs`) without reading anything,
   * and reads the run's record once it came. No notice FINAL_READ_MARGIN_MS before the window's
   * end: the record is read once (a lost notice), and the notice is still listened for until the
   * caller answers 202 (its signal aborts): at most two reads. A caller that waits on past its
   * window, or a queue that failed, falls back to the backed-off reads.
   */
  const waitForNotice = async (fn: FunctionItem, runId: string, watch: RunEndWatch, waitMs: number, signal?: AbortSignal): Promise<InvokeResult> => {
    const never = () => new Promise<never>(() => undefined);
    const windowEnd = Date.now() + waitMs;
    /** The record, when it is final (canceled too: its slot stays taken, Runtime.canceledRunsRunOn). */
    const readFinal = async (): Promise<InvokeResult | null> => {
      const run = await options.runs.get(runId).catch(() => undefined);
      return run && FINAL_STATUSES.includes(run.status) ? resultOf(run) : null;
    };
    try {
      let outcome = await watch.ended(windowEnd - FINAL_READ_MARGIN_MS, signal);
      if (outcome === "window_over" && !signal?.aborted) {
        const final = await readFinal();
        if (final) return final;
        outcome = await watch.ended(windowEnd + FINAL_READ_MARGIN_MS, signal);
      }
      if (signal?.aborted) return never();
      if (outcome === "ended") {
        const final = await readFinal();
        if (final) return final;
      }
    } finally {
      watch.close();
    }
    return waitForEnd(fn, runId, signal);
  };

  /**
   * Starts the run workflow (runWorkflow.ts) with an execution named after the run's attempt
   * (executionName: one execution per attempt, Step Functions refuses a second name) and the run's event, which
   * carries a presigned URL for an outcome too big for the workflow; then `onRunning`. The
   * workflow invokes the function's Lambda (RequestResponse) and its recorder writes the
   * run's final record and meters it. Meanwhile a caller with a window waits for the
   * recorder's end notice on its container's wait queue (`endNotices`, named in the execution's
   * input as `notify`) and reads the record once (waitForNotice); without one this reads the
   * record from time to time, backing off (RUN_READS), and resolves with it once it is final; the caller's own finish then
   * finds the run ended already and keeps that record (finishRun). A caller that stops
   * waiting (the sync window's 202) loses nothing: the record is written without it; one
   * whose signal is aborted before the start (a queued run's dispatcher) has it read not once.
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
  return async function invoke(request: InvokeRequest, hooks: InvokeHooks): Promise<InvokeResult> {
    const { fn, version } = request;
    const proxy = proxyOf(fn);
    const attempt = request.attempt ?? 1;
    const now = Date.now();
    // The leases lapse after the run's deadline, when the sweeper has ended it anyway.
    const profiles = options.profiles
      ? await grantRunProfiles(options.profiles, fn, version, {
          runId: request.runId,
          attempt,
          nowMs: now,
          leaseUntilMs: now + fn.timeout_seconds * 1000 + RUN_DEADLINE_MARGIN_MS,
          expiresInSeconds: fn.timeout_seconds + UPLOAD_URL_MARGIN_SECONDS,
        })
      : undefined;
    let watch: RunEndWatch | null;
    try {
      watch = await startExecution(request, proxy, profiles);
    } catch (error) {
      // Never started: the leases it took go back at once.
      if (options.profiles) await releaseRunProfiles(options.profiles, request.runId, attempt).catch(() => undefined);
      throw error;
    }
    await hooks.onRunning().catch((error: unknown) => {
      watch?.close();
      throw error;
    });
    if (watch) return waitForNotice(fn, request.runId, watch, request.waitMs, request.signal);
    return waitForEnd(fn, request.runId, request.signal);
  };

  /**
   * The run's secrets for its Lambda: each as stored (what runners before the envelope open)
   * and, with runDataKeys, all under the function's data key (one Decrypt for the run).
   */
  async function sealedSecrets(fn: FunctionItem, secrets: NonNullable<InvokeRequest["secrets"]>): Promise<SealedSecrets> {
    const runner = runnerSession(options.executionRoleId, functionName(fn));
    const items = secrets.sealed.map(({ name, sealed }) => ({ name, sealed }));
    const envelope = options.runDataKeys ? await options.runDataKeys.seal(fn.function_id, runner, secrets.values) : undefined;
    return { function_id: fn.function_id, runner, items, ...(envelope ? { envelope } : {}) };
  }

  /**
   * Starts the run's execution with its event; throws only when none started. Answers the
   * watch on the container's wait queue the recorder will notify (null: nobody waits).
   */
  async function startExecution(request: InvokeRequest, proxy: ReturnType<typeof proxyOf>, profiles: RunProfileGrant[] | undefined): Promise<RunEndWatch | null> {
    const { fn, version } = request;
    const event: LambdaRunEvent = {
      run_id: request.runId,
      params: request.params,
      timeout_ms: fn.timeout_seconds * 1000,
      uploads: await options.outcomes.uploads(request.runId, fn.timeout_seconds + UPLOAD_URL_MARGIN_SECONDS, request.attempt ?? 1),
      artifacts_url: request.artifactsUrl,
      recording: recordingModeOf(fn.recording),
      // The setting only: the Lambda reads the password from the secrets it opens itself.
      ...(proxy ? { proxy } : {}),
      ...(profiles ? { profiles } : {}),
      // Sealed, as stored: the function's Lambda opens them itself, so no value is in the workflow's history.
      ...(request.secrets && request.secrets.sealed.length > 0 ? { secrets: await sealedSecrets(fn, request.secrets) } : {}),
    };
    // Only a caller that waits has a notice sent (a dispatcher's signal is aborted before the start).
    const waits = options.endNotices !== undefined && request.waitMs > FINAL_READ_MARGIN_MS && request.signal?.aborted !== true;
    const watch = waits ? await options.endNotices?.watch(request.runId) : null;
    // `run_id` then `notify` first: the sweeper reads only this head of a status-change event's input (runEnds/executionNotify.ts).
    const input: RunExecutionInput = {
      run_id: request.runId,
      // This caller's queue, or that of a caller that queued the run and waits for it elsewhere.
      notify: watch?.queueUrl ?? request.notify ?? null,
      function: `${functionName(fn)}:${versionAlias(version)}`,
      timeout_seconds: fn.timeout_seconds,
      invoke_timeout_seconds: fn.timeout_seconds + INVOKE_MARGIN_SECONDS,
      event,
      throttles: 0,
      attempt: request.attempt ?? 1,
    };
    let text = JSON.stringify(input);
    if (Buffer.byteLength(text) > MAX_EXECUTION_INPUT_BYTES && event.secrets?.envelope) {
      // The envelope repeats the secrets: a run it would not fit goes without it (its Lambda opens each secret on its own, as before it).
      const secrets: SealedSecrets = { function_id: event.secrets.function_id, runner: event.secrets.runner, items: event.secrets.items };
      text = JSON.stringify({ ...input, event: { ...event, secrets } });
    }
    if (Buffer.byteLength(text) > MAX_EXECUTION_INPUT_BYTES) {
      watch?.close();
      throw paramsTooLarge(Buffer.byteLength(text));
    }
    const command = new StartExecutionCommand({ stateMachineArn: options.stateMachineArn, name: executionName(request.runId, request.attempt), input: text });
    try {
      await options.stepFunctions.send(command);
    } catch (error) {
      if (refusedStart(error)) watch?.close();
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
    return watch ?? null;
  }
}

/** Whether a StartExecution error means no execution started (invoke throws it then). */
function refusedStart(error: unknown): boolean {
  const status = httpStatusOf(error);
  return (status !== undefined && status >= 400 && status < 500 && !isAwsError(error, "ExecutionAlreadyExists")) || isAwsError(error, "ExecutionLimitExceeded") || isAwsError(error, "ThrottlingException");
}

/** A final run record as the runtime's result. */
function resultOf(run: RunItem): InvokeResult {
  return {
    status: run.status === "succeeded" || run.status === "timed_out" || run.status === "canceled" ? run.status : "failed",
    result_json: run.result_json,
    error: run.error,
    logs: run.logs,
    duration_ms: run.duration_ms ?? 0,
    browser_ms: run.browser_ms,
    peak_memory_mb: run.peak_memory_mb,
  };
}
