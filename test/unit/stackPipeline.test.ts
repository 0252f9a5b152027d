import { Match } from "aws-cdk-lib/assertions";
import type { StartExecutionCommand } from "@aws-sdk/client-sfn";
import { createAwsRuntime } from "../../lambdas/runtime/aws/awsRuntime";
import { lambdaTimeoutSeconds } from "../../lambdas/runtime/aws/deployLambda";
import { STALE_DEPLOY_MS } from "../../lambdas/functions/deployLimits";
import { RUN_DEADLINE_MARGIN_MS } from "../../lambdas/runs/types";
import { functionItem, runItem } from "../helpers/records";
import { synthStack } from "../helpers/testStack";

// The run pipeline as synthesized: the workflow's shape (states, retries, catches, timeouts),
// who may start it and what it may invoke, the bucket, the dead-letter queue, the sweeper's
// rules and the alarms.
type Resource = { Properties: Record<string, unknown> };
interface Statement {
  Action: string | string[];
  Resource: unknown;
}
const list = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

interface Retrier {
  ErrorEquals: string[];
  MaxAttempts: number;
  IntervalSeconds: number;
  BackoffRate: number;
  MaxDelaySeconds?: number;
}
interface State {
  Type: string;
  Resource?: string;
  Seconds?: number;
  Choices?: { Variable: string; StringMatches?: string; NumericGreaterThanEquals?: number; Next: string }[];
  Default?: string;
  Retry?: Retrier[];
  Catch?: { ErrorEquals: string[]; Next: string; ResultPath?: string }[];
  Next?: string;
  End?: boolean;
  TimeoutSeconds?: number;
  TimeoutSecondsPath?: string;
  Parameters?: Record<string, unknown>;
}

describe("the run pipeline (synthesized)", () => {
  const template = synthStack();
  const [[machineId, machine]] = Object.entries(template.findResources("AWS::StepFunctions::StateMachine")) as [[string, Resource]];
  const definition = JSON.parse(String(machine.Properties.DefinitionString)) as { States: Record<string, State>; StartAt: string; TimeoutSeconds: number };
  const functionNamed = (name: string) =>
    (Object.entries(template.findResources("AWS::Lambda::Function")) as [string, Resource][]).find(([, fn]) => fn.Properties.FunctionName === name) ?? ["", { Properties: {} }];
  const policiesOf = (roleId: string) =>
    (Object.values(template.findResources("AWS::IAM::Policy")) as { Properties: { Roles: { Ref: string }[]; PolicyDocument: { Statement: Statement[] } } }[])
      .filter((policy) => policy.Properties.Roles.some((role) => role.Ref === roleId))
      .flatMap((policy) => policy.Properties.PolicyDocument.Statement);
  const roleId = (start: string) => Object.keys(template.findResources("AWS::IAM::Role")).find((id) => id.startsWith(start)) ?? "";

  it("is one Standard workflow of the run's states, with the recorder and the dead-letter queue filled in", () => {
    expect(machine.Properties).toMatchObject({ StateMachineName: "bfn-test-runs", StateMachineType: "STANDARD", TracingConfiguration: { Enabled: true } });
    expect(Object.keys(definition.States).sort()).toEqual([
      "CountThrottle",
      "DeadLetter",
      "Invoke",
      "Record",
      "Recorded",
      "Reinvoke",
      "Retrying",
      "ThrottleEnded",
      "Throttled",
      "Unrecorded",
      "WaitLambda",
      "WaitRetry",
      "WaitThrottle",
      "WakeQueue",
    ]);
    expect(definition.StartAt).toBe("Invoke");
    expect(typeof definition.TimeoutSeconds).toBe("number");
    // The placeholders the substitutions fill, where they are used.
    expect(definition.States.Record?.Parameters?.FunctionName).toBe("${RecorderArn}");
    expect((definition.States.DeadLetter?.Parameters as { QueueUrl?: unknown }).QueueUrl).toBe("${DeadLetterUrl}");
    const [recorderId] = functionNamed("bfn-test-run-recorder");
    const [queueId] = Object.keys(template.findResources("AWS::SQS::Queue")).filter((id) => id.startsWith("RunPipeline"));
    expect(machine.Properties.DefinitionSubstitutions).toEqual({ RecorderArn: { "Fn::GetAtt": [recorderId, "Arn"] }, DeadLetterUrl: { Ref: queueId } });
    // Every event is logged, none of a run's data.
    expect(machine.Properties.LoggingConfiguration).toMatchObject({ Level: "ALL", IncludeExecutionData: false });
  });

  it("invokes the function's Lambda with its answer, retrying Lambda's own throttles and service errors only, catching every error into the recorder", () => {
    expect(definition.StartAt).toBe("Invoke");
    const invoke = definition.States.Invoke as State;
    expect(invoke).toMatchObject({ Type: "Task", Resource: "arn:aws:states:::lambda:invoke", TimeoutSecondsPath: "$.invoke_timeout_seconds", Next: "Record" });
    expect(invoke.Parameters).toEqual({ "FunctionName.$": "$.function", "Payload.$": "$.event" }); // RequestResponse: the default
    // No Retry: a function's error can wear any name, so a throttle is told apart by its cause first.
    expect(invoke.Retry).toBeUndefined();
    expect(invoke.Catch).toEqual([
      // AWS's Step Functions guidance (bp-lambda-serviceexception): the Lambda service's own failures are tried again.
      {
        ErrorEquals: ["Lambda.TooManyRequestsException", "Lambda.ServiceException", "Lambda.AWSLambdaException", "Lambda.SdkClientException"],
        ResultPath: "$.throttle",
        Next: "Throttled",
      },
      { ErrorEquals: ["States.ALL"], Next: "Record" },
    ]);
    expect(definition.States.Throttled).toMatchObject({
      Type: "Choice",
      Choices: [
        { Variable: "$.throttle.Cause", StringMatches: "{*", Next: "ThrottleEnded" },
        { Variable: "$.throttles", NumericGreaterThanEquals: 5, Next: "ThrottleEnded" },
      ],
      Default: "CountThrottle",
    });
    expect(definition.States.CountThrottle).toMatchObject({ Type: "Pass", Next: "WaitThrottle" });
    expect(definition.States.WaitThrottle).toEqual({ Type: "Wait", Seconds: 5, Next: "Invoke" });
    expect(definition.States.ThrottleEnded).toMatchObject({ Type: "Pass", Next: "Record" });
    const record = definition.States.Record as State;
    expect(record).toMatchObject({ Type: "Task", Resource: "arn:aws:states:::lambda:invoke", TimeoutSeconds: 60, Next: "Retrying" });
    // The run's id and timeout come from the execution's input, the times from Step Functions: never from the answer.
    expect(record.Parameters?.Payload).toEqual({
      "run_id.$": "$$.Execution.Input.run_id",
      "timeout_seconds.$": "$$.Execution.Input.timeout_seconds",
      "started_at.$": "$$.Execution.StartTime",
      "ended_at.$": "$$.State.EnteredTime",
      "ended.$": "$",
      "attempt.$": "$$.Execution.Input.attempt",
      "execution_arn.$": "$$.Execution.Id",
      // The waiting route's wait queue (null: nobody waits); every starter writes it (#23.1).
      "notify.$": "$$.Execution.Input.notify",
    });
    // …so a stack update changes every Lambda that starts runs before this definition: an
    // execution of it is never started by code that did not write `notify` (States.Runtime).
    const [machine] = Object.values(template.findResources("AWS::StepFunctions::StateMachine")) as { DependsOn?: string[] }[];
    const lambdas = template.findResources("AWS::Lambda::Function") as Record<string, { Properties: { FunctionName: string } }>;
    const starters = Object.entries(lambdas)
      .filter(([, f]) => ["invokePost", "invokeGet", "mcp", "createBatch", "scheduled-run", "run-sweeper"].some((name) => f.Properties.FunctionName.endsWith(name)))
      .map(([id]) => id);
    expect(starters).toHaveLength(6);
    for (const id of starters) expect(machine?.DependsOn).toContain(id);
    expect(record.Retry).toEqual([{ ErrorEquals: ["States.ALL"], IntervalSeconds: 2, BackoffRate: 2, MaxAttempts: 6 }]);
    expect(record.Catch).toEqual([{ ErrorEquals: ["States.ALL"], Next: "DeadLetter" }]);
    expect(definition.States.DeadLetter).toMatchObject({ Type: "Task", Resource: "arn:aws:states:::sqs:sendMessage", TimeoutSeconds: 30, Next: "Unrecorded" });
    expect(definition.States.DeadLetter?.Retry).toEqual([{ ErrorEquals: ["States.ALL"], IntervalSeconds: 2, BackoffRate: 2, MaxAttempts: 4 }]);
    expect(definition.States.DeadLetter?.Catch).toBeUndefined();
    expect(definition.States.Unrecorded).toMatchObject({ Type: "Fail", Error: "RunNotRecorded" });
  });

  it("waits for a retried run's next attempt in the workflow (a Wait until retry_at), then has the recorder wake the run queue", () => {
    const states = definition.States as Record<string, State & { TimestampPath?: string; ResultSelector?: unknown; ResultPath?: unknown }>;
    expect(states.Record?.ResultSelector).toEqual({
      "status.$": "$.Payload.status",
      "retry_at.$": "$.Payload.retry_at",
      "account_id.$": "$.Payload.account_id",
      "reinvoke.$": "$.Payload.reinvoke",
    });
    // IsString: the recorder answers null when the run ended (no path is ever missing, which would fail the execution).
    expect(states.Retrying).toEqual({
      Type: "Choice",
      Choices: [
        { Variable: "$.reinvoke", BooleanEquals: true, Next: "WaitLambda" },
        { Variable: "$.retry_at", IsString: true, Next: "WaitRetry" },
      ],
      Default: "Recorded",
    });
    // A scheduled or batch run Lambda kept throttling waits until retry_at and is invoked again from the execution's input.
    expect(states.WaitLambda).toEqual({ Type: "Wait", TimestampPath: "$.retry_at", Next: "Reinvoke" });
    expect(states.Reinvoke).toEqual({
      Type: "Pass",
      Parameters: {
        "run_id.$": "$$.Execution.Input.run_id",
        "function.$": "$$.Execution.Input.function",
        "timeout_seconds.$": "$$.Execution.Input.timeout_seconds",
        "invoke_timeout_seconds.$": "$$.Execution.Input.invoke_timeout_seconds",
        "event.$": "$$.Execution.Input.event",
        throttles: 0,
      },
      Next: "Invoke",
    });
    expect(states.WaitRetry).toEqual({ Type: "Wait", TimestampPath: "$.retry_at", Next: "WakeQueue" });
    expect(states.WakeQueue).toMatchObject({
      Type: "Task",
      Resource: "arn:aws:states:::lambda:invoke",
      Parameters: { FunctionName: "${RecorderArn}", Payload: { "wake_account.$": "$.account_id" } },
      Retry: [{ ErrorEquals: ["States.ALL"], IntervalSeconds: 2, BackoffRate: 2, MaxAttempts: 6 }],
      // A wake-up that failed every retry: the sweeper's recovery starts the run.
      Catch: [{ ErrorEquals: ["States.ALL"], ResultPath: null, Next: "Recorded" }],
      Next: "Recorded",
    });
    expect(states.Recorded).toEqual({ Type: "Succeed" });
    // The longest backoff (1 h) and every WakeQueue attempt fit in the execution's timeout.
    const wake = taskWorstSeconds(states.WakeQueue, states.WakeQueue?.TimeoutSeconds ?? NaN);
    const record = taskWorstSeconds(states.Record, states.Record?.TimeoutSeconds ?? NaN);
    // And the rounds of a run that waits for a throttled Lambda (30 min, then its last round).
    expect(definition.TimeoutSeconds).toBeGreaterThanOrEqual(900 + 60 + 55 + 30 * 60 + 60 + 55 + record + 3600 + wake);
  });

  /** How long a Task can take with every retry: each attempt at its full timeout, and the waits between them. */
  const taskWorstSeconds = (state: State | undefined, timeoutSeconds: number) => {
    const retries = (state?.Retry ?? []).reduce((max, r) => Math.max(max, r.MaxAttempts), 0);
    const retrier = state?.Retry?.[0];
    const waits = retrier ? Array.from({ length: retrier.MaxAttempts }, (_, n) => Math.min(retrier.IntervalSeconds * retrier.BackoffRate ** n, retrier.MaxDelaySeconds ?? Infinity)) : [];
    return (retries + 1) * timeoutSeconds + waits.reduce((a, b) => a + b, 0);
  };
  /** What the AWS runtime starts an execution with for a function of timeout T (its real input). */
  const executionInputFor = async (T: number) => {
    const sent: StartExecutionCommand[] = [];
    const fn = functionItem({ function_id: "fn_01jabcdefghjkmnpqrstvwxyz0", timeout_seconds: T, latest_version: 1 });
    const runtime = createAwsRuntime({
      lambda: { send: async () => Promise.reject(new Error("unused")) },
      stepFunctions: { send: async (command) => void sent.push(command as StartExecutionCommand) },
      stateMachineArn: "arn:sm", outcomes: { uploads: async () => ({ url: "u", fields: {}, outcome: { key: "k", policy: "p", signature: "s" }, artifacts: { key_prefix: "k", policy_template: "{}", signatures: [] } }) },
      runs: { get: async () => runItem(fn, { status: "succeeded", duration_ms: 1 }) },
      functionPrefix: "bfn-test-fn-", executionRoleArn: "role", executionRoleId: "AROA", layerArns: [], logGroup: "/g",
    });
    await runtime.invoke({ fn, version: 1, runId: "run_1", params: {}, waitMs: 0, artifactsUrl: "https://a/" }, { onQueued: async () => undefined, onRunning: async () => undefined });
    return JSON.parse(String(sent[0]?.input.input)) as { invoke_timeout_seconds: number };
  };

  it("waits for the function's Lambda longer than Lambda lets it run, for any timeout", async () => {
    expect(definition.States.Invoke?.TimeoutSecondsPath).toBe("$.invoke_timeout_seconds");
    for (const T of [1, 30, 60, 300, 840, 841, 900]) {
      const { invoke_timeout_seconds } = await executionInputFor(T);
      // Lambda stops the function itself (an error the recorder names) before Invoke gives up on it.
      expect(invoke_timeout_seconds).toBeGreaterThan(lambdaTimeoutSeconds(T));
    }
  });

  it("lasts longer than its worst path (the longest function, every throttle, every recorder and dead-letter attempt), and records before the sweeper's deadline", async () => {
    const states = definition.States;
    // The longest function: Lambda's 900 s at most, and Invoke's timeout from the real execution input.
    const invoke = (await executionInputFor(900)).invoke_timeout_seconds;
    expect(invoke).toBeGreaterThanOrEqual(900);
    // Throttles: Invoke is tried until `throttles` reaches the Choice's bound, a Wait between tries;
    // a throttled Invoke is answered at once (allow 5 s each).
    const bound = states.Throttled?.Choices?.find((choice) => choice.NumericGreaterThanEquals !== undefined)?.NumericGreaterThanEquals ?? NaN;
    const throttled = (bound + 1) * 5 + bound * (states.WaitThrottle?.Seconds ?? NaN);
    const record = taskWorstSeconds(states.Record, states.Record?.TimeoutSeconds ?? NaN);
    const deadLetter = taskWorstSeconds(states.DeadLetter, states.DeadLetter?.TimeoutSeconds ?? NaN);
    expect({ throttled, record, deadLetter }).toEqual({ throttled: 55, record: 7 * 60 + 126, deadLetter: 5 * 30 + 30 });
    const worst = invoke + throttled + record + deadLetter;
    expect(definition.TimeoutSeconds).toBeGreaterThanOrEqual(worst);
    // Nothing records the run after the recorder's last attempt: by then the sweeper may end it.
    for (const T of [1, 30, 300, 900]) {
      const recordedBy = (await executionInputFor(T)).invoke_timeout_seconds + throttled + record;
      expect(recordedBy * 1000).toBeLessThan(T * 1000 + RUN_DEADLINE_MARGIN_MS);
    }
  });

  it("stops a recorder attempt in its Lambda before the Record state's timeout: no attempt still runs when the next starts", () => {
    const [, recorder] = functionNamed("bfn-test-run-recorder");
    expect(recorder.Properties.Timeout).toEqual(expect.any(Number));
    expect(recorder.Properties.Timeout as number).toBeLessThan(definition.States.Record?.TimeoutSeconds ?? 0);
  });

  it("lets the workflow invoke the function Lambdas and the recorder, and send to its dead-letter queue: nothing else", () => {
    const statements = policiesOf(roleId("RunPipelineRunWorkflowRole"));
    const invoke = statements.filter((s) => list(s.Action).includes("lambda:InvokeFunction"));
    expect(invoke).toHaveLength(1);
    const resources = JSON.stringify(invoke[0]?.Resource);
    expect(resources).toContain(":function:bfn-test-fn-*");
    expect(resources).toContain(functionNamed("bfn-test-run-recorder")[0]);
    const actions = statements.flatMap((s) => list(s.Action)).filter((a) => !/^(xray|logs):/.test(a)).sort();
    expect(actions).toEqual(["lambda:InvokeFunction", "sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:SendMessage"]);
  });

  it("lets the route handlers, the scheduled-run target and the run queue's dispatchers start the workflow and sign upload URLs; only the workflow invokes Lambdas", () => {
    for (const role of ["HandlersRoutesInvokeRole", "HandlersScheduledRunRole", "HandlersRunRecorderRole", "HandlersRunSweeperRole"]) {
      const statements = policiesOf(roleId(role));
      // By name (the state machine is made after the handlers), the name being the machine's own.
      const start = statements.filter((s) => list(s.Action).includes("states:StartExecution"));
      expect(start.map((s) => list(s.Action))).toEqual([["states:StartExecution"]]);
      expect(JSON.stringify(start[0]?.Resource)).toContain(`:stateMachine:${String(machine.Properties.StateMachineName)}"`);
      const puts = statements.filter((s) => list(s.Action).includes("s3:PutObject"));
      expect(puts.some((put) => JSON.stringify(put.Resource).includes("/outcomes/*"))).toBe(true);
      // No function Lambda: the route handlers invoke the deploy job, nothing else.
      const invokes = statements.filter((s) => list(s.Action).includes("lambda:InvokeFunction"));
      for (const s of invokes) expect(JSON.stringify(s.Resource)).toMatch(/:function:bfn-test-deploy-job"/);
    }
    const invokers = (Object.values(template.findResources("AWS::IAM::Policy")) as { Properties: { Roles: { Ref: string }[]; PolicyDocument: { Statement: Statement[] } } }[])
      .filter((policy) => policy.Properties.PolicyDocument.Statement.some((s) => list(s.Action).includes("lambda:InvokeFunction") && JSON.stringify(s.Resource).includes("bfn-test-fn-")))
      .flatMap((policy) => policy.Properties.Roles.map((role) => role.Ref));
    expect(invokers).toEqual([roleId("RunPipelineRunWorkflowRole")]);
  });

  it("keeps outcomes in a private, encrypted, SSL-only bucket whose objects expire", () => {
    template.hasResourceProperties("AWS::S3::Bucket", {
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: "AES256" } }] },
      // Presigned downloads only (a signature is needed all the same): GET from the dashboard's origin.
      CorsConfiguration: { CorsRules: [{ AllowedMethods: ["GET"], AllowedOrigins: ["*"], MaxAge: 3600 }] },
      LifecycleConfiguration: {
        Rules: Match.arrayWith([
          Match.objectLike({ Prefix: "outcomes/", ExpirationInDays: 1, Status: "Enabled" }),
          Match.objectLike({ Prefix: "artifacts/", ExpirationInDays: 7, Status: "Enabled" }),
          // The live view's latest frames and watch markers.
          Match.objectLike({ Prefix: "live/", ExpirationInDays: 1, Status: "Enabled" }),
          Match.objectLike({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } }),
        ]),
      },
    });
    template.hasResourceProperties("AWS::S3::BucketPolicy", {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: "Deny", Condition: { Bool: { "aws:SecureTransport": "false" } } })]) },
    });
  });

  it("sweeps overdue runs every 5 minutes, and ends the run of any execution that fails, times out or is stopped", () => {
    const [sweeperId] = functionNamed("bfn-test-run-sweeper");
    template.hasResourceProperties("AWS::Events::Rule", {
      ScheduleExpression: "rate(5 minutes)",
      Targets: [Match.objectLike({ Arn: { "Fn::GetAtt": [sweeperId, "Arn"] } })],
    });
    template.hasResourceProperties("AWS::Events::Rule", {
      EventPattern: {
        source: ["aws.states"],
        "detail-type": ["Step Functions Execution Status Change"],
        detail: { status: ["FAILED", "TIMED_OUT", "ABORTED"], stateMachineArn: [{ Ref: machineId }] },
      },
      Targets: [Match.objectLike({ Arn: { "Fn::GetAtt": [sweeperId, "Arn"] }, DeadLetterConfig: Match.anyValue(), RetryPolicy: Match.objectLike({ MaximumRetryAttempts: 20 }) })],
    });
  });

  it("deploys in a job Lambda off the request path: 15 minutes, retried twice within 10 minutes, then handed to the sweeper; named in the routes' environment", () => {
    const [jobId, job] = functionNamed("bfn-test-deploy-job");
    expect(job.Properties.Timeout).toBe(900);
    const [sweeperId] = functionNamed("bfn-test-run-sweeper");
    // No run of a job starts after its event age, nor lasts past the timeout: STALE_DEPLOY_MS is longer than both.
    expect(STALE_DEPLOY_MS).toBeGreaterThan((600 + 900) * 1000);
    template.hasResourceProperties("AWS::Lambda::EventInvokeConfig", {
      FunctionName: { Ref: jobId },
      MaximumRetryAttempts: 2,
      MaximumEventAgeInSeconds: 600,
      DestinationConfig: { OnFailure: { Destination: { "Fn::GetAtt": [sweeperId, "Arn"] } } },
    });
    const [queueId] = Object.keys(template.findResources("AWS::SQS::Queue")).filter((id) => id.startsWith("RunPipeline"));
    template.hasResourceProperties("AWS::Lambda::EventInvokeConfig", {
      FunctionName: { Ref: sweeperId },
      DestinationConfig: { OnFailure: { Destination: { "Fn::GetAtt": [queueId, "Arn"] } } },
    });
    const [, route] = functionNamed("bfn-test-api-createFunction");
    expect((route.Properties.Environment as { Variables: Record<string, unknown> }).Variables.BROWSERFN_DEPLOY_JOB_FUNCTION).toBe("bfn-test-deploy-job");
  });

  it("alarms on failed, timed-out and stopped executions, on dead letters, and on runs the sweeper ended past their deadline", () => {
    const alarms = (Object.entries(template.findResources("AWS::CloudWatch::Alarm")) as [string, Resource][]).filter(([id]) => id.startsWith("RunPipeline")).map(([, alarm]) => alarm.Properties);
    const ofMachine = [{ Name: "StateMachineArn", Value: { Ref: machineId } }];
    const once = { Threshold: 1, EvaluationPeriods: 1, ComparisonOperator: "GreaterThanOrEqualToThreshold", TreatMissingData: "notBreaching", Period: 300 };
    for (const metric of ["ExecutionsFailed", "ExecutionsTimedOut", "ExecutionsAborted"]) {
      expect(alarms).toContainEqual(expect.objectContaining({ MetricName: metric, Namespace: "AWS/States", Dimensions: ofMachine, Statistic: "Sum", ...once }));
    }
    expect(alarms).toContainEqual(expect.objectContaining({ MetricName: "ApproximateNumberOfMessagesVisible", Namespace: "AWS/SQS", ...once }));
    // The sweeper's own metric (an EMF line in its log: sweptRunsMetric.ts), of this stack.
    expect(alarms).toContainEqual(
      expect.objectContaining({ MetricName: "RunsSweptPastDeadline", Namespace: "browserfn", Dimensions: [{ Name: "Stack", Value: "bfn-test" }], Statistic: "Sum", ...once }),
    );
    expect(alarms).toHaveLength(5);
  });
});
