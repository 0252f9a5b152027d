import { Match } from "aws-cdk-lib/assertions";
import { AWS_ENV } from "../../lambdas/aws/awsConfig";
import { WEBHOOK_MAX_RECEIVES } from "../../lib/webhookDelivery";
import { synthStack } from "../helpers/testStack";

type Statement = { Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown };
type Resource = { Type: string; Properties: Record<string, unknown> };
const list = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);
const text = (value: unknown): string => {
  if (typeof value === "string") return value;
  const v = value as Record<string, unknown>;
  if (v.Ref) return `<${String(v.Ref)}>`;
  if (v["Fn::GetAtt"]) return `<${(v["Fn::GetAtt"] as string[]).join(".")}>`;
  if (v["Fn::Join"]) return (v["Fn::Join"] as [string, unknown[]])[1].map(text).join((v["Fn::Join"] as [string])[0]);
  return JSON.stringify(value);
};

describe("the stack's webhook delivery", () => {
  const template = synthStack();
  const all = (type: string) => Object.entries(template.findResources(type)) as [string, Resource][];
  const idOf = (type: string, prefix: string) => {
    const found = all(type).find(([id]) => id.startsWith(prefix));
    if (!found) throw new Error(`no ${type} ${prefix}`);
    return found[0];
  };
  const queueId = idOf("AWS::SQS::Queue", "WebhooksQueue");
  const dlqId = idOf("AWS::SQS::Queue", "WebhooksDeadLetters");
  const [keyId] = all("AWS::KMS::Key").map(([id]) => id);
  const [deliveryId, delivery] = all("AWS::Lambda::Function").find(([, fn]) => fn.Properties.FunctionName === "bfn-test-webhook-delivery") ?? ["", { Properties: {} } as Resource];
  const roleId = (prefix: string) => idOf("AWS::IAM::Role", prefix);
  const statementsOf = (role: string): Statement[] =>
    all("AWS::IAM::Policy")
      .filter(([, policy]) => (policy.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === role))
      .flatMap(([, policy]) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);

  it("queues deliveries on an encrypted, SSL-only queue that keeps messages 4 days, with a dead-letter queue and an alarm on it", () => {
    template.hasResourceProperties("AWS::SQS::Queue", {
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: 4 * 86_400,
      VisibilityTimeout: 360,
      RedrivePolicy: { deadLetterTargetArn: { "Fn::GetAtt": [dlqId, "Arn"] }, maxReceiveCount: WEBHOOK_MAX_RECEIVES },
    });
    expect(WEBHOOK_MAX_RECEIVES).toBeGreaterThan(8);
    template.hasResourceProperties("AWS::SQS::Queue", { SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 86_400 });
    template.hasResourceProperties("AWS::SQS::QueuePolicy", {
      Queues: [{ Ref: queueId }],
      PolicyDocument: { Statement: [Match.objectLike({ Effect: "Deny", Condition: { Bool: { "aws:SecureTransport": "false" } } })] },
    });
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      Namespace: "AWS/SQS",
      MetricName: "ApproximateNumberOfMessagesVisible",
      Dimensions: [{ Name: "QueueName", Value: { "Fn::GetAtt": [dlqId, "QueueName"] } }],
      Threshold: 1,
      ComparisonOperator: "GreaterThanOrEqualToThreshold",
    });
  });

  it("consumes the queue with the delivery Lambda, reporting failed items one by one", () => {
    expect(delivery.Properties).toMatchObject({ Timeout: 60, MemorySize: 256, Runtime: "nodejs22.x" });
    template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      FunctionName: { Ref: deliveryId },
      EventSourceArn: { "Fn::GetAtt": [queueId, "Arn"] },
      BatchSize: 10,
      FunctionResponseTypes: ["ReportBatchItemFailures"],
    });
    const env = (delivery.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(env[AWS_ENV.webhookQueueUrl]).toEqual({ Ref: queueId });
    expect(env[AWS_ENV.secretsKeyArn]).toEqual({ "Fn::GetAtt": [keyId, "Arn"] });
  });

  it("gives the delivery Lambda's role only the table, the queue, its logs and kms:Decrypt of function-bound values", () => {
    const statements = statementsOf(roleId("HandlersWebhookDeliveryRole"));
    const actions = statements.flatMap((s) => list(s.Action)).filter((a) => !a.startsWith("logs:")).sort();
    expect(actions).toEqual([
      "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "kms:Decrypt",
      "sqs:ChangeMessageVisibility", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:ReceiveMessage",
    ]);
    for (const statement of statements) {
      const resources = list(statement.Resource).map(text);
      const action = list(statement.Action)[0] ?? "";
      if (action.startsWith("sqs:")) expect(resources).toEqual([`<${queueId}.Arn>`]);
      if (action.startsWith("kms:")) {
        expect(resources).toEqual([`<${keyId}.Arn>`]);
        expect(statement.Condition).toEqual({ Null: { "kms:EncryptionContext:function_id": "false" } });
      }
      if (action.startsWith("dynamodb:")) for (const resource of resources) expect(resource).toMatch(/^<Datamain[A-Za-z0-9]+\.Arn>(\/index\/gsi1)?$/);
    }
  });

  it("lets whoever records runs' ends send to the queue, and nobody else", () => {
    const senders = all("AWS::IAM::Policy")
      .filter(([, policy]) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement.some((s) => list(s.Action).includes("sqs:SendMessage") && list(s.Resource).map(text).includes(`<${queueId}.Arn>`)))
      .flatMap(([, policy]) => (policy.Properties.Roles as { Ref: string }[]).map((r) => r.Ref))
      .sort();
    // Of the routes, only those that end runs: invocations (and MCP, batches), and cancel.
    expect(senders).toEqual(["HandlersRoutesInvokeRole", "HandlersRoutesCancelRole", "HandlersRunRecorderRole", "HandlersRunSweeperRole", "HandlersScheduledRunRole"].map(roleId).sort());
  });

  it("seals secrets with a rotated KMS key, each grant bound to a function's encryption context", () => {
    template.hasResourceProperties("AWS::KMS::Key", { EnableKeyRotation: true });
    template.hasResourceProperties("AWS::KMS::Alias", { AliasName: "alias/bfn-test-secrets" });
    // (Besides the key used through S3 only, for profiles' states: test/unit/stackSecurity.test.ts.)
    const kms = (role: string) => statementsOf(roleId(role)).filter((s) => list(s.Action).some((a) => a.startsWith("kms:")) && !JSON.stringify(s).includes("kms:ViaService"));
    const bound = { Null: { "kms:EncryptionContext:function_id": "false" } };
    // Run starters also make the data key a run's secrets go under (lambdas/secrets/runEnvelope), with its purpose only.
    const dataKeys = expect.objectContaining({ Action: "kms:GenerateDataKey", Resource: { "Fn::GetAtt": [keyId, "Arn"] }, Condition: { ...bound, StringEquals: { "kms:EncryptionContext:purpose": "run_data_key" } } });
    const sealAndOpen = expect.objectContaining({ Action: ["kms:Encrypt", "kms:Decrypt"], Resource: { "Fn::GetAtt": [keyId, "Arn"] }, Condition: bound });
    expect(kms("HandlersRoutesInvokeRole")).toEqual([sealAndOpen, dataKeys]);
    for (const role of ["HandlersRoutesFunctionsRole", "HandlersRoutesSecretsRole"]) expect(kms(role)).toEqual([sealAndOpen]);
    const open = expect.objectContaining({ Action: "kms:Decrypt", Resource: { "Fn::GetAtt": [keyId, "Arn"] }, Condition: bound });
    expect(kms("HandlersWebhookDeliveryRole")).toEqual([open]);
    // The recorder, the sweeper (they start queued runs) and the scheduled run: open (values redacted from records), and data keys.
    for (const role of ["HandlersRunRecorderRole", "HandlersScheduledRunRole", "HandlersRunSweeperRole"]) {
      expect(kms(role)).toEqual(expect.arrayContaining([open, dataKeys]));
      expect(kms(role)).toHaveLength(2);
    }
    expect(kms("FunctionRuntimeExecutionRole")).toEqual([
      expect.objectContaining({ Action: "kms:Decrypt", Resource: { "Fn::GetAtt": [keyId, "Arn"] }, Condition: { StringEquals: { "kms:EncryptionContext:runner": "${aws:userid}" } } }),
    ]);
    for (const role of ["HandlersOpenRole", "HandlersAuthorizerRole", "HandlersDeployJobRole", "HandlersRoutesDataRole", "HandlersRoutesCancelRole", "HandlersRoutesArtifactsRole", "HandlersRoutesProfilesRole"]) expect(kms(role)).toEqual([]);
  });
});
