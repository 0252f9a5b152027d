/**
 * The run workflow: the trusted orchestrator of every run on AWS (shared/DESIGN.md, "The AWS
 * run pipeline"), written once as plain Amazon States Language. The CDK stack deploys it as a
 * Step Functions Standard state machine (lib/runPipeline.ts); the tests execute this same
 * definition in an in-process interpreter (test/helpers/inProcessStepFunctions.ts).
 *
 *   Invoke ──answer or error──▶ Record ──▶ (end)
 *                                  └─ the recorder failed every retry ─▶ DeadLetter ─▶ Unrecorded (Fail)
 *
 * - `Invoke` calls the function's Lambda (alias `vN`) with RequestResponse, so its answer (the
 *   runner's outcome, or the marker of an outcome it uploaded) comes back here, never through
 *   anything the function's own role may call. Throttles are retried with backoff (the function
 *   never ran); nothing else is (an ambiguous failure may have run the automation: it must not
 *   run twice). Every error, the task's own timeout included, is caught into the state.
 * - `Record` hands the answer or the error to the recorder Lambda (runs/recordRun.ts), which
 *   parses it as untrusted and writes the run's final record. The run's id, timeout and the
 *   times come from the execution's input and Step Functions' own clock, never from the answer.
 * - A recorder that fails every retry sends the run id to the dead-letter queue and fails the
 *   execution (an alarm watches both); the sweeper ends such a run at its deadline.
 */
import type { LambdaRunEvent } from "../../runner/lambdaPackage";

/** What the trusted side starts an execution with (its name is the run id). */
export interface RunExecutionInput {
  run_id: string;
  /** The function's Lambda, qualified with the version's alias: `<name>:v<N>`. */
  function: string;
  /** The function's timeout (s): the recorder names it when the run times out. */
  timeout_seconds: number;
  /** How long Invoke waits for the Lambda's answer: its timeout plus a cold start. */
  invoke_timeout_seconds: number;
  /** What the function's Lambda is invoked with. */
  event: LambdaRunEvent;
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
}

/** Where the definition's placeholders are filled in (CDK definitionSubstitutions). */
export const WORKFLOW_SUBSTITUTIONS = { recorderArn: "RecorderArn", deadLetterUrl: "DeadLetterUrl" } as const;

/** Beyond the function's timeout: a cold start with the Chromium layer, and the runner's own deadline margin. */
export const INVOKE_MARGIN_SECONDS = 60;

/** Throttles of the function's Lambda: retried after 1, 2, 4, 8 and 16 s (about 31 s in all), then the run fails with concurrency_limit_exceeded. */
export const THROTTLE_RETRY = {
  ErrorEquals: ["Lambda.TooManyRequestsException"],
  IntervalSeconds: 1,
  BackoffRate: 2,
  MaxAttempts: 5,
  MaxDelaySeconds: 16,
  JitterStrategy: "FULL",
};

/** The recorder: retried on any error (it throws only when the store fails) after 2, 4, … 64 s. */
export const RECORD_RETRY = { ErrorEquals: ["States.ALL"], IntervalSeconds: 2, BackoffRate: 2, MaxAttempts: 6 };

/**
 * No execution lasts longer: the longest function (900 s), its invoke margin, the throttle
 * retries and the recorder's retries fit within it, and it ends before the sweeper's deadline
 * for the run (RUN_DEADLINE_MARGIN_MS past the function's timeout).
 */
export const EXECUTION_TIMEOUT_SECONDS = 1140;

/** The error an execution fails with when its run could not be recorded. */
export const RUN_NOT_RECORDED = "RunNotRecorded";

/** The Amazon States Language definition, with `${RecorderArn}` and `${DeadLetterUrl}` to substitute. */
export function runWorkflowDefinition(): Record<string, unknown> {
  const placeholder = (name: string) => `\${${name}}`;
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
        Retry: [THROTTLE_RETRY],
        Catch: [{ ErrorEquals: ["States.ALL"], Next: "Record" }],
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
          },
        },
        TimeoutSeconds: 60,
        ResultSelector: { "status.$": "$.Payload.status" },
        Retry: [RECORD_RETRY],
        Catch: [{ ErrorEquals: ["States.ALL"], ResultPath: "$.record_failure", Next: "DeadLetter" }],
        End: true,
      },
      DeadLetter: {
        Type: "Task",
        Resource: "arn:aws:states:::sqs:sendMessage",
        Parameters: {
          QueueUrl: placeholder(WORKFLOW_SUBSTITUTIONS.deadLetterUrl),
          MessageBody: { "run_id.$": "$$.Execution.Input.run_id", "failure.$": "$.record_failure" },
        },
        Retry: [{ ErrorEquals: ["States.ALL"], IntervalSeconds: 2, BackoffRate: 2, MaxAttempts: 4 }],
        Next: "Unrecorded",
      },
      Unrecorded: {
        Type: "Fail",
        Error: RUN_NOT_RECORDED,
        Cause: "The recorder failed on every attempt; the run id is in the dead-letter queue and the sweeper ends the run at its deadline",
      },
    },
  };
}
