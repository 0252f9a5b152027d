import { Match } from "aws-cdk-lib/assertions";
import { STALE_DEPLOY_MS } from "../../lambdas/functions/deployLimits";
import {
  EXECUTION_TIMEOUT_SECONDS,
  INVOKE_MARGIN_SECONDS,
  RECORD_RETRY,
  runWorkflowDefinition,
  THROTTLE_ATTEMPTS,
  THROTTLE_WAIT_SECONDS,
} from "../../lambdas/runtime/aws/runWorkflow";
import { RUN_DEADLINE_MARGIN_MS } from "../../lambdas/runs/types";
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

interface State {
  Type: string;
  Resource?: string;
  Retry?: { ErrorEquals: string[]; MaxAttempts: number; IntervalSeconds: number; BackoffRate: number }[];
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

  it("is one Standard workflow, the definition runWorkflow.ts writes, with the recorder and the dead-letter queue filled in", () => {
    expect(machine.Properties).toMatchObject({ StateMachineName: "bfn-test-runs", StateMachineType: "STANDARD", TracingConfiguration: { Enabled: true } });
    expect(definition).toEqual(runWorkflowDefinition());
    const [recorderId] = functionNamed("bfn-test-run-recorder");
    const [queueId] = Object.keys(template.findResources("AWS::SQS::Queue")).filter((id) => id.startsWith("RunPipeline"));
    expect(machine.Properties.DefinitionSubstitutions).toEqual({ RecorderArn: { "Fn::GetAtt": [recorderId, "Arn"] }, DeadLetterUrl: { Ref: queueId } });
    // Every event is logged, none of a run's data.
    expect(machine.Properties.LoggingConfiguration).toMatchObject({ Level: "ALL", IncludeExecutionData: false });
  });

  it("invokes the function's Lambda with its answer, retrying Lambda's own throttles only, catching every error into the recorder", () => {
    expect(definition.StartAt).toBe("Invoke");
    const invoke = definition.States.Invoke as State;
    expect(invoke).toMatchObject({ Type: "Task", Resource: "arn:aws:states:::lambda:invoke", TimeoutSecondsPath: "$.invoke_timeout_seconds", Next: "Record" });
    expect(invoke.Parameters).toEqual({ "FunctionName.$": "$.function", "Payload.$": "$.event" }); // RequestResponse: the default
    // No Retry: a function's error can wear any name, so a throttle is told apart by its cause first.
    expect(invoke.Retry).toBeUndefined();
    expect(invoke.Catch).toEqual([
      { ErrorEquals: ["Lambda.TooManyRequestsException"], ResultPath: "$.throttle", Next: "Throttled" },
      { ErrorEquals: ["States.ALL"], Next: "Record" },
    ]);
    expect(definition.States.Throttled).toMatchObject({
      Type: "Choice",
      Choices: [
        { Variable: "$.throttle.Cause", StringMatches: "{*", Next: "ThrottleEnded" },
        { Variable: "$.throttles", NumericGreaterThanEquals: THROTTLE_ATTEMPTS - 1, Next: "ThrottleEnded" },
      ],
      Default: "CountThrottle",
    });
    expect(definition.States.CountThrottle).toMatchObject({ Type: "Pass", Next: "WaitThrottle" });
    expect(definition.States.WaitThrottle).toEqual({ Type: "Wait", Seconds: THROTTLE_WAIT_SECONDS, Next: "Invoke" });
    expect(definition.States.ThrottleEnded).toMatchObject({ Type: "Pass", Next: "Record" });
    const record = definition.States.Record as State;
    expect(record).toMatchObject({ Type: "Task", Resource: "arn:aws:states:::lambda:invoke", TimeoutSeconds: 60, End: true });
    // The run's id and timeout come from the execution's input, the times from Step Functions: never from the answer.
    expect(record.Parameters?.Payload).toEqual({
      "run_id.$": "$$.Execution.Input.run_id",
      "timeout_seconds.$": "$$.Execution.Input.timeout_seconds",
      "started_at.$": "$$.Execution.StartTime",
      "ended_at.$": "$$.State.EnteredTime",
      "ended.$": "$",
    });
    expect(record.Retry).toEqual([expect.objectContaining({ ErrorEquals: ["States.ALL"], MaxAttempts: 6 })]);
    expect(record.Catch).toEqual([{ ErrorEquals: ["States.ALL"], Next: "DeadLetter" }]);
    expect(definition.States.DeadLetter).toMatchObject({ Type: "Task", Resource: "arn:aws:states:::sqs:sendMessage", Next: "Unrecorded" });
    expect(definition.States.Unrecorded).toMatchObject({ Type: "Fail", Error: "RunNotRecorded" });
  });

  it("ends every execution before the sweeper's deadline for its run, the longest function included", () => {
    expect(definition.TimeoutSeconds).toBe(EXECUTION_TIMEOUT_SECONDS);
    const record = definition.States.Record as State;
    const waits = (retry: State["Retry"]) =>
      (retry ?? []).reduce((sum, r) => sum + Array.from({ length: r.MaxAttempts }, (_, n) => r.IntervalSeconds * r.BackoffRate ** n).reduce((a, b) => a + b, 0), 0);
    // For any timeout T: Invoke's own timeout, every throttle (its failed Invoke and its wait),
    // and every recorder attempt at its full timeout with the waits between.
    for (const T of [1, 30, 300, 900]) {
      const longest = T + INVOKE_MARGIN_SECONDS + THROTTLE_ATTEMPTS * (THROTTLE_WAIT_SECONDS + 5) + (RECORD_RETRY.MaxAttempts + 1) * (record.TimeoutSeconds ?? 0) + waits(record.Retry);
      expect(longest).toBeLessThanOrEqual(T === 900 ? EXECUTION_TIMEOUT_SECONDS : EXECUTION_TIMEOUT_SECONDS - 900 + T);
      expect(longest * 1000).toBeLessThan(T * 1000 + RUN_DEADLINE_MARGIN_MS);
    }
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

  it("lets the route handlers and the scheduled-run target start the workflow and sign upload URLs; only the workflow invokes Lambdas", () => {
    for (const role of ["HandlersApiRole", "HandlersScheduledRunRole"]) {
      const statements = policiesOf(roleId(role));
      // By name (the state machine is made after the handlers), the name being the machine's own.
      const start = statements.filter((s) => list(s.Action).includes("states:StartExecution"));
      expect(start.map((s) => list(s.Action))).toEqual([["states:StartExecution"]]);
      expect(JSON.stringify(start[0]?.Resource)).toContain(`:stateMachine:${String(machine.Properties.StateMachineName)}"`);
      const put = statements.find((s) => list(s.Action).includes("s3:PutObject"));
      expect(JSON.stringify(put?.Resource)).toContain("/outcomes/*");
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

  it("alarms on failed executions and on dead letters", () => {
    template.hasResourceProperties("AWS::CloudWatch::Alarm", { MetricName: "ExecutionsFailed", Namespace: "AWS/States", Threshold: 1 });
    template.hasResourceProperties("AWS::CloudWatch::Alarm", { MetricName: "ApproximateNumberOfMessagesVisible", Namespace: "AWS/SQS", Threshold: 1 });
  });
});
