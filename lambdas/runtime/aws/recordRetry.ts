import { DescribeExecutionCommand } from "@aws-sdk/client-sfn";
import { z } from "zod";
import type { Deps } from "../../deps";
import { retryRun, type RetryInput } from "../../retries/endAttempt";
import { nextAttempt } from "../../retries/retryPolicy";
import { retriesOf } from "../../retries/retrySettings";
import type { RunItem } from "../../runs/types";
import type { InvokeResult } from "../runtime";
import type { StepFunctionsLike } from "./runExecutions";

/**
 * Queues a run's next attempt after the attempt that `ended` (shouldRetry held): the run as
 * nextAttempt builds it, written and queued by retryRun (which gives the ended attempt's lease
 * back in its queueing write, and meters the attempt's execution). Undefined when it could not
 * be queued (the run's function is gone, its parameters cannot be read, the queue is full, or
 * the run ended meanwhile): the recorder then ends the run with this attempt's outcome.
 */
export type AttemptRetry = (run: RunItem, ended: InvokeResult, executionArn: string) => Promise<RunItem | undefined>;

/**
 * The execution input as the AWS runtime wrote it (runExecutions.ts), as far as a retry reads
 * it: the run's real parameters (the record keeps them redacted) and its artifacts' URL.
 */
const ExecutionInput = z.object({
  run_id: z.string(),
  event: z.object({ params: z.record(z.string(), z.unknown()), artifacts_url: z.string() }),
});

/**
 * The AWS recorder's retry (recordRun.ts, endRun): the run's unredacted parameters are read
 * back from the input of the execution that ran the attempt (DescribeExecution; the workflow
 * input is where they already are, so no copy of them is written anywhere else, and a run that
 * is not retried costs nothing), then retryRun queues the run, ready at its `retry_at`. The
 * execution that called the recorder waits until then and wakes the account's run queue
 * (runWorkflow.ts, WaitRetry and WakeQueue).
 */
export function awsAttemptRetry(deps: Deps, stepFunctions: StepFunctionsLike): AttemptRetry {
  return async (run, ended, executionArn) => {
    const fn = await deps.store.functions.getById(run.function_id);
    if (!fn) return undefined;
    const retry = await retryInputOf(stepFunctions, executionArn, run.run_id);
    if (!retry) {
      deps.log(`run ${run.run_id}: its execution's input names no parameters, so it is not retried`);
      return undefined;
    }
    const next = nextAttempt(run, ended, { backoffSeconds: retriesOf(fn).backoff_seconds, timeoutSeconds: fn.timeout_seconds }, deps.clock.now());
    const queued = await retryRun(deps, next, ended, retry);
    // The enqueue woke this Lambda's dispatcher (the retry is not ready yet): done before it is frozen.
    await deps.queue.idle();
    return queued;
  };
}

/** The parameters and base URL of the run's execution, or undefined when its input is not the runtime's. */
async function retryInputOf(stepFunctions: StepFunctionsLike, executionArn: string, runId: string): Promise<RetryInput | undefined> {
  const described = (await stepFunctions.send(new DescribeExecutionCommand({ executionArn }))) as { input?: unknown };
  if (typeof described.input !== "string") return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(described.input);
  } catch {
    return undefined;
  }
  const input = ExecutionInput.safeParse(parsed);
  if (!input.success || input.data.run_id !== runId) return undefined;
  // The runtime built the URL as `<base URL>/runs/<run id>/artifacts/` (launchRun): the base URL is what precedes it.
  const suffix = `/runs/${runId}/artifacts/`;
  const url = input.data.event.artifacts_url;
  const baseUrl = url.endsWith(suffix) && url.length > suffix.length ? url.slice(0, -suffix.length) : null;
  return { params: input.data.event.params, baseUrl };
}
