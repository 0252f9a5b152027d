/**
 * The run workflow: the trusted orchestrator of every run on AWS (shared/DESIGN.md, "The AWS
 * run pipeline"), written once as plain Amazon States Language. The CDK stack deploys it as a
 * Step Functions Standard state machine (lib/runPipeline.ts); the tests execute this same
 * definition in an in-process interpreter (test/helpers/inProcessStepFunctions.ts).
 *
 *   Invoke ──answer or error──────────────────────────▶ Record ──▶ (end)
 *     └─ Lambda throttled ─▶ Throttled ─▶ CountThrottle ─▶ WaitThrottle ─▶ Invoke (up to THROTTLE_ATTEMPTS)
 *                              └─ a function error wearing a throttle's name, or too many ─▶ ThrottleEnded ─▶ Record
 *   Record ─(the recorder failed every retry)─▶ DeadLetter ─▶ Unrecorded (Fail)
 *   Record ─▶ Retrying ─(the run waits for its next attempt)─▶ WaitRetry (until retry_at) ─▶ WakeQueue ─▶ Recorded
 *                ├─ (a scheduled or batch run Lambda throttled) ─▶ WaitLambda (until retry_at) ─▶ Reinvoke ─▶ Invoke
 *                └─ (its end was recorded) ─▶ Recorded (Succeed)
 *
 * - `Invoke` calls the function's Lambda (alias `vN`) with RequestResponse, so its answer (the
 *   runner's outcome, or the marker of an outcome it uploaded) comes back here, never through
 *   anything the function's own role may call. Every error, the task's own timeout included, is
 *   caught into the state.
 * - Only Lambda's own throttle (`Lambda.TooManyRequestsException` with Lambda's message as its
 *   cause: the function never ran) and the Lambda service's own failures (LAMBDA_SERVICE_ERRORS:
 *   `Lambda.ServiceException`, `Lambda.AWSLambdaException`, `Lambda.SdkClientException`, which
 *   AWS's guidance says to retry) are tried again, counted together. The Lambda integration raises a function's
 *   error under the `errorType` the function chose, so user code can throw an error named like a
 *   throttle; its cause is then the function's JSON error payload (`{"errorType": …}`), which
 *   `Throttled` tells apart. Nothing else is retried here: a timeout or a function error may have
 *   run the automation (the run's own `retries` setting decides whether it runs again). A
 *   service error after Lambda ran the function is rare; AWS recommends retrying it all the same.
 *
 *   Invoke ─Lambda.ServiceException, AWSLambdaException, SdkClientException─▶ Throttled (as a throttle)
 * - `Record` hands the answer or the error to the recorder Lambda (runtime/aws/recordRun.ts),
 *   which parses it as untrusted and writes the run's final record. The run's id, timeout and
 *   the times come from the execution's input and Step Functions' own clock, never from the answer.
 * - When the recorder queued the run for its next attempt (the function's `retries`), it answers
 *   `retry_at`: this execution waits until then (a Step Functions Wait: nothing polls) and
 *   has the recorder wake the account's run queue, whose dispatcher starts the next attempt as
 *   an execution of its own (`<run id>-attempt-<n>`). docs/deploy.md, "Retries on AWS".
 * - A recorder that fails every retry sends the run id to the dead-letter queue and fails the
 *   execution (an alarm watches both); the sweeper ends such a run at once (EventBridge).
 */
import { MAX_BACKOFF_MS } from "../../retries/retryPolicy";
import { LAMBDA_THROTTLE_WAIT } from "./throttleWait";
import type { LambdaRunEvent } from "../../runner/lambdaPackage";

/** What the trusted side starts an execution with (its name is the run id). */
export interface RunExecutionInput {
  run_id: string;
  /**
   * The wait queue of the route that waits for the run's end (runEnds/runEndWaiter.ts): the
   * recorder sends the run's id there once the end is written. Null: nobody waits (always
   * present: the Record state reads it).
   */
  notify: string | null;
  /** The function's Lambda, qualified with the version's alias: `<name>:v<N>`. */
  function: string;
  /** The function's timeout (s): the recorder names it when the run times out. */
  timeout_seconds: number;
  /** How long Invoke waits for the Lambda's answer: its timeout plus a cold start. */
  invoke_timeout_seconds: number;
  /** What the function's Lambda is invoked with. */
  event: LambdaRunEvent;
  /** Throttles met so far: 0 at the start. */
  throttles: number;
  /** Which attempt of the run this execution is (lambdas/retries): the recorder ends that attempt only. */
  attempt: number;
}

/** The recorder's input, as the Record state builds it. */
export interface RecordRunInput {
  run_id: string;
  timeout_seconds: number;
  /** When the execution started (Step Functions' clock, ISO 8601). */
  started_at: string;
  /** When Invoke ended (the Record state's entry). */
  ended_at: string;
  /** `{ answer }` when the Lambda answered; Step Functions' `{ Error, Cause }` otherwise. */
  ended: unknown;
  /** The attempt the execution ran (its input's). */
  attempt: number;
  /** The execution (`$$.Execution.Id`): a retry reads the run's parameters from its input (DescribeExecution). */
  execution_arn: string;
  /** The execution input's `notify`: where the waiting route hears of the end. */
  notify: string | null;
}

/**
 * What the recorder answers the Record state: the run's status, and when the run waits for its
 * next attempt, when that is due and its account (the workflow then waits until `retry_at`
 * and has the recorder wake the account's run queue: WaitRetry, WakeQueue). Both null otherwise.
 */
export interface RecordRunAnswer {
  status: string;
  retry_at: string | null;
  account_id: string | null;
  /**
   * True for a run that waits for Lambda (a scheduled firing or batch item throttled past the
   * quick retries: throttleWait.ts): the workflow waits until `retry_at`, then invokes again.
   */
  reinvoke: boolean;
}

/** The recorder's other input: wake an account's run queue (WakeQueue, once a retry is due). */
export interface WakeQueueInput {
  wake_account: string;
}

/** Where the definition's placeholders are filled in (CDK definitionSubstitutions). */
export const WORKFLOW_SUBSTITUTIONS = { recorderArn: "RecorderArn", deadLetterUrl: "DeadLetterUrl" } as const;

/** Beyond the function's timeout: a cold start with the Chromium layer, and the runner's own deadline margin. */
export const INVOKE_MARGIN_SECONDS = 60;

/**
 * What the Lambda service raises when the invoke itself failed (AWS's Step Functions guidance,
 * bp-lambda-serviceexception: retry these), with its throttle: Invoke is tried again for each,
 * through the same bounded count and wait as a throttle (a function's own error wearing one of
 * these names is told apart by its JSON cause, and is never retried).
 */
export const LAMBDA_SERVICE_ERRORS = ["Lambda.TooManyRequestsException", "Lambda.ServiceException", "Lambda.AWSLambdaException", "Lambda.SdkClientException"] as const;

/** Tries of a throttled Invoke, THROTTLE_WAIT_SECONDS apart (about 30 s in all); then the run fails with concurrency_limit_exceeded. */
export const THROTTLE_ATTEMPTS = 6;
export const THROTTLE_WAIT_SECONDS = 5;

/**
 * How long a run that waits for Lambda (throttleWait.ts) may go on being invoked again, with
 * its last round: the limit, a round of quick throttles and the recorder that sent it back.
 */
const LAMBDA_THROTTLE_WAIT_LIMIT_SECONDS = LAMBDA_THROTTLE_WAIT.limitMs / 1000 + LAMBDA_THROTTLE_WAIT.waitMs / 1000 + 60 + 60;

/** How long the recorder may take per attempt. */
export const RECORD_TIMEOUT_SECONDS = 60;

/**
 * The recorder Lambda's own timeout: shorter than RECORD_TIMEOUT_SECONDS, so an attempt that
 * runs long is stopped by Lambda (an error the Retry takes) before the task times out, and never
 * still runs while the next attempt starts.
 */
export const RECORDER_LAMBDA_TIMEOUT_SECONDS = 50;

/** The recorder: retried on any error (it throws only when the store fails) after 2, 4, … 64 s. */
export const RECORD_RETRY = { ErrorEquals: ["States.ALL"], IntervalSeconds: 2, BackoffRate: 2, MaxAttempts: 6 };

/** The dead-letter send: retried on any error after 2, 4, 8, 16 s, each attempt up to its timeout. */
export const DEAD_LETTER_TIMEOUT_SECONDS = 30;
export const DEAD_LETTER_RETRY = { ErrorEquals: ["States.ALL"], IntervalSeconds: 2, BackoffRate: 2, MaxAttempts: 4 };

/** A retried task's longest time: every attempt at its full timeout, and the waits between them. */
function retriedSeconds(timeoutSeconds: number, retry: { IntervalSeconds: number; BackoffRate: number; MaxAttempts: number }): number {
  let waits = 0;
  for (let n = 0; n < retry.MaxAttempts; n++) waits += retry.IntervalSeconds * retry.BackoffRate ** n;
  return (retry.MaxAttempts + 1) * timeoutSeconds + waits;
}

/**
 * The longest an execution can last: the longest function (900 s) and its invoke margin, every
 * throttle (its Invoke and its wait), every recorder attempt with the waits between them
 * (7 × 60 + 126 s), and then the longer of every dead-letter attempt (5 × 30 + 30 s) and a
 * retry's longest backoff (1 h) with every WakeQueue attempt (546 s), and the rounds of a run
 * that waits for a throttled Lambda (throttleWait.ts: 30 min and its last round, 1,980 s):
 * 7,692 s, its `TimeoutSeconds`.
 * An execution that times out after its Record state (in WaitRetry) ends nothing: the sweeper
 * sees that the run has gone on to a later attempt.
 * Up to the recorder's last attempt it stays below RUN_DEADLINE_MARGIN_MS past the function's
 * timeout, so the sweeper never ends a run whose workflow may still record it.
 */
export const EXECUTION_TIMEOUT_SECONDS =
  900 +
  INVOKE_MARGIN_SECONDS +
  THROTTLE_ATTEMPTS * (THROTTLE_WAIT_SECONDS + 5) +
  LAMBDA_THROTTLE_WAIT_LIMIT_SECONDS +
  retriedSeconds(RECORD_TIMEOUT_SECONDS, RECORD_RETRY) +
  Math.max(retriedSeconds(DEAD_LETTER_TIMEOUT_SECONDS, DEAD_LETTER_RETRY), MAX_BACKOFF_MS / 1000 + retriedSeconds(RECORD_TIMEOUT_SECONDS, RECORD_RETRY));

/** The error an execution fails with when its run could not be recorded. */
export const RUN_NOT_RECORDED = "RunNotRecorded";

/** The Amazon States Language definition, with `${RecorderArn}` and `${DeadLetterUrl}` to substitute. */
export function runWorkflowDefinition(): Record<string, unknown> {
  const placeholder = (name: string) => `\${${name}}`;
  // What the retried Invoke needs again: the execution's input, with the throttle count.
  const invokeInput = (from: string) => ({
    "run_id.$": `${from}.run_id`,
    "function.$": `${from}.function`,
    "timeout_seconds.$": `${from}.timeout_seconds`,
    "invoke_timeout_seconds.$": `${from}.invoke_timeout_seconds`,
    "event.$": `${from}.event`,
  });
  return {
    Comment: "browserfn: one run of a function — invoke its Lambda, record how it ended",
    StartAt: "Invoke",
    TimeoutSeconds: EXECUTION_TIMEOUT_SECONDS,
    States: {
      Invoke: {
        Type: "Task",
        Resource: "arn:aws:states:::lambda:invoke",
        Parameters: { "FunctionName.$": "$.function", "Payload.$": "$.event" },
        TimeoutSecondsPath: "$.invoke_timeout_seconds",
        // Only the answer is kept: the event (with its parameters) leaves the state here, so
        // an answer of up to the runner's inline size fits Step Functions' 256 KB.
        ResultSelector: { "answer.$": "$.Payload" },
        Catch: [
          { ErrorEquals: [...LAMBDA_SERVICE_ERRORS], ResultPath: "$.throttle", Next: "Throttled" },
          { ErrorEquals: ["States.ALL"], Next: "Record" },
        ],
        Next: "Record",
      },
      Throttled: {
        Type: "Choice",
        Choices: [
          // The function's own error under a throttle's name: its cause is its JSON error payload.
          { Variable: "$.throttle.Cause", StringMatches: "{*", Next: "ThrottleEnded" },
          { Variable: "$.throttles", NumericGreaterThanEquals: THROTTLE_ATTEMPTS - 1, Next: "ThrottleEnded" },
        ],
        Default: "CountThrottle",
      },
      CountThrottle: {
        Type: "Pass",
        Parameters: { ...invokeInput("$"), "throttles.$": "States.MathAdd($.throttles, 1)" },
        Next: "WaitThrottle",
      },
      WaitThrottle: { Type: "Wait", Seconds: THROTTLE_WAIT_SECONDS, Next: "Invoke" },
      ThrottleEnded: {
        Type: "Pass",
        Parameters: { "Error.$": "$.throttle.Error", "Cause.$": "$.throttle.Cause" },
        Next: "Record",
      },
      Record: {
        Type: "Task",
        Resource: "arn:aws:states:::lambda:invoke",
        Parameters: {
          FunctionName: placeholder(WORKFLOW_SUBSTITUTIONS.recorderArn),
          Payload: {
            "run_id.$": "$$.Execution.Input.run_id",
            "timeout_seconds.$": "$$.Execution.Input.timeout_seconds",
            "started_at.$": "$$.Execution.StartTime",
            "ended_at.$": "$$.State.EnteredTime",
            "ended.$": "$",
            "attempt.$": "$$.Execution.Input.attempt",
            "execution_arn.$": "$$.Execution.Id",
            // Every starter names it (null: nobody waits); the stack updates them before this definition (lib/handlers.ts).
            "notify.$": "$$.Execution.Input.notify",
          },
        },
        TimeoutSeconds: RECORD_TIMEOUT_SECONDS,
        ResultSelector: {
          "status.$": "$.Payload.status",
          "retry_at.$": "$.Payload.retry_at",
          "account_id.$": "$.Payload.account_id",
          "reinvoke.$": "$.Payload.reinvoke",
        },
        Retry: [RECORD_RETRY],
        // Only the failure is kept (an answer near 256 KB and the recorder's error would not fit together).
        Catch: [{ ErrorEquals: ["States.ALL"], Next: "DeadLetter" }],
        Next: "Retrying",
      },
      // The run waits for its next attempt (the recorder queued it, ready at retry_at): this
      // execution wakes the account's run queue then (nothing polls; docs/deploy.md).
      Retrying: {
        Type: "Choice",
        Choices: [
          // Lambda throttled a run that waits as long as needed: it is invoked again at retry_at, its lease kept.
          { Variable: "$.reinvoke", BooleanEquals: true, Next: "WaitLambda" },
          { Variable: "$.retry_at", IsString: true, Next: "WaitRetry" },
        ],
        Default: "Recorded",
      },
      WaitLambda: { Type: "Wait", TimestampPath: "$.retry_at", Next: "Reinvoke" },
      // The execution's input again, its throttle count back to 0 (each round has its quick retries).
      Reinvoke: { Type: "Pass", Parameters: { ...invokeInput("$$.Execution.Input"), throttles: 0 }, Next: "Invoke" },
      WaitRetry: { Type: "Wait", TimestampPath: "$.retry_at", Next: "WakeQueue" },
      WakeQueue: {
        Type: "Task",
        Resource: "arn:aws:states:::lambda:invoke",
        Parameters: { FunctionName: placeholder(WORKFLOW_SUBSTITUTIONS.recorderArn), Payload: { "wake_account.$": "$.account_id" } },
        TimeoutSeconds: RECORD_TIMEOUT_SECONDS,
        ResultPath: null,
        Retry: [RECORD_RETRY],
        // A wake-up that failed every retry: the sweeper's recovery starts the run (≤ SWEEP_INTERVAL late).
        Catch: [{ ErrorEquals: ["States.ALL"], ResultPath: null, Next: "Recorded" }],
        Next: "Recorded",
      },
      Recorded: { Type: "Succeed" },
      DeadLetter: {
        Type: "Task",
        Resource: "arn:aws:states:::sqs:sendMessage",
        Parameters: {
          QueueUrl: placeholder(WORKFLOW_SUBSTITUTIONS.deadLetterUrl),
          MessageBody: { "run_id.$": "$$.Execution.Input.run_id", "failure.$": "$" },
        },
        TimeoutSeconds: DEAD_LETTER_TIMEOUT_SECONDS,
        Retry: [DEAD_LETTER_RETRY],
        Next: "Unrecorded",
      },
      Unrecorded: {
        Type: "Fail",
        Error: RUN_NOT_RECORDED,
        Cause: "The recorder failed on every attempt; the run id is in the dead-letter queue and the sweeper ends the run",
      },
    },
  };
}
