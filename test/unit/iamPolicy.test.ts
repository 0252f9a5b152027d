import { Aws } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { PolicyStatement, Role } from "aws-cdk-lib/aws-iam";
import { type AuthzRequest, evaluate, type PolicyStatement as Statement, UndecidedPolicy } from "../helpers/iamPolicy";
import { ACCOUNT, REGION, StackPolicies, type TemplateJson } from "../helpers/stackPolicies";
import { testStack } from "../helpers/testStack";

// The policy evaluator the AWS stand-ins authorize calls with (test/integration/awsRunAttacks),
// over the synthesized stack: it must deny what the stack denies, and allow what it allows.

const at = `${REGION}:${ACCOUNT}`;
const RECORDER = `arn:aws:lambda:${at}:function:bfn-test-run-recorder`;
const RUNS = `arn:aws:states:${at}:stateMachine:bfn-test-runs`;
const BUCKET = "arn:aws:s3:::bfn-run-bucket";
const request = (action: string, resource: string, context: Record<string, string> = {}): AuthzRequest => ({ action, resource, context });

function policiesOf(template: TemplateJson): StackPolicies {
  const policies = new StackPolicies(template);
  return new StackPolicies(template, { [policies.logicalId("AWS::S3::Bucket", "RunPipelineRunBucket")]: "bfn-run-bucket" });
}

describe("the policy evaluator", () => {
  it("allows what a statement allows, and an explicit Deny wins", () => {
    const allow: Statement = { Effect: "Allow", Action: "s3:Get*", Resource: `${BUCKET}/outcomes/*` };
    expect(evaluate([allow], request("s3:GetObject", `${BUCKET}/outcomes/run_1.json`)).effect).toBe("Allow");
    expect(evaluate([allow], request("S3:getobject", `${BUCKET}/outcomes/run_1.json`)).effect).toBe("Allow"); // actions ignore case
    expect(evaluate([allow], request("s3:GetObject", `${BUCKET}/artifacts/run_1/a.png`)).effect).toBe("ImplicitDeny");
    expect(evaluate([allow], request("s3:PutObject", `${BUCKET}/outcomes/run_1.json`)).effect).toBe("ImplicitDeny");
    const deny: Statement = { Effect: "Deny", Action: "s3:*", Resource: `${BUCKET}/*`, Condition: { Bool: { "aws:SecureTransport": "false" } } };
    expect(evaluate([allow, deny], request("s3:GetObject", `${BUCKET}/outcomes/run_1.json`, { "aws:SecureTransport": "false" })).effect).toBe("ExplicitDeny");
    expect(evaluate([allow, deny], request("s3:GetObject", `${BUCKET}/outcomes/run_1.json`, { "aws:SecureTransport": "true" })).effect).toBe("Allow");
  });

  it("reads NotAction, `?`, policy variables, and refuses to guess a condition it cannot evaluate", () => {
    const notAction: Statement = { Effect: "Allow", NotAction: ["iam:*", "lambda:Invoke*"], Resource: "*" };
    expect(evaluate([notAction], request("lambda:InvokeFunction", RECORDER)).effect).toBe("ImplicitDeny");
    expect(evaluate([notAction], request("states:StartExecution", RUNS)).effect).toBe("Allow");
    expect(evaluate([{ Effect: "Allow", Action: "lambda:InvokeFunction", Resource: `arn:aws:lambda:${at}:function:bfn-fn-?` }], request("lambda:InvokeFunction", `arn:aws:lambda:${at}:function:bfn-fn-ab`)).effect).toBe("ImplicitDeny");
    const own: Statement = { Effect: "Allow", Action: "kms:Decrypt", Resource: "*", Condition: { StringEquals: { "kms:EncryptionContext:runner": "${aws:userid}" } } };
    expect(evaluate([own], request("kms:Decrypt", "k", { "aws:userid": "ROLE:fn-a", "kms:EncryptionContext:runner": "ROLE:fn-a" })).effect).toBe("Allow");
    expect(evaluate([own], request("kms:Decrypt", "k", { "aws:userid": "ROLE:fn-b", "kms:EncryptionContext:runner": "ROLE:fn-a" })).effect).toBe("ImplicitDeny");
    expect(evaluate([own], request("kms:Decrypt", "k", { "kms:EncryptionContext:runner": "ROLE:fn-a" })).effect).toBe("ImplicitDeny"); // no aws:userid
    const unknown: Statement = { Effect: "Allow", Action: "*", Resource: "*", Condition: { IpAddressSomeday: { "aws:SourceIp": "10.0.0.0/8" } } };
    expect(() => evaluate([unknown], request("lambda:InvokeFunction", RECORDER, { "aws:SourceIp": "10.0.0.1" }))).toThrow(UndecidedPolicy);
    const multi: Statement = { Effect: "Deny", Action: "*", Resource: "*", Condition: { "ForAnyValue:StringLike": { "aws:TagKeys": "a*" } } };
    expect(() => evaluate([multi], request("lambda:TagResource", RECORDER, { "aws:TagKeys": "abc" }))).toThrow(UndecidedPolicy);
    // A statement that does not match the request by action or resource is not in question.
    const tagging: Statement = { Effect: "Deny", Action: "lambda:TagResource", Resource: "*", Condition: { "ForAnyValue:StringLike": { "aws:TagKeys": "a*" } } };
    expect(evaluate([tagging], request("lambda:InvokeFunction", RECORDER)).effect).toBe("ImplicitDeny");
  });
});

describe("the stack's roles, through the evaluator", () => {
  const stack = testStack();
  const policies = policiesOf(Template.fromStack(stack).toJSON() as TemplateJson);
  const execution = policies.roleStatements(policies.logicalId("AWS::IAM::Role", "FunctionRuntimeExecutionRole"));
  const recorder = policies.roleStatements(policies.roleOfFunction("bfn-test-run-recorder"));
  const workflow = policies.roleStatements(policies.logicalId("AWS::IAM::Role", "RunPipelineRunWorkflowRole"));

  it("resolves the ARNs the deployed stack has", () => {
    expect(policies.arn(policies.logicalId("AWS::Lambda::Function", "HandlersRunRecorder"))).toBe(RECORDER);
    expect(policies.arn(policies.logicalId("AWS::StepFunctions::StateMachine", "RunPipelineRunWorkflow"))).toBe(RUNS);
  });

  it("lets the recorder and the workflow do their work", () => {
    expect(evaluate(recorder, request("s3:GetObject", `${BUCKET}/outcomes/run_1.json`)).effect).toBe("Allow");
    expect(evaluate(recorder, request("dynamodb:UpdateItem", policies.arn(policies.logicalId("AWS::DynamoDB::GlobalTable", "Datamain")))).effect).toBe("Allow");
    expect(evaluate(recorder, request("kms:Decrypt", policies.arn(policies.logicalId("AWS::KMS::Key", "SecretsKey")), { "kms:EncryptionContext:function_id": "fn_1" })).effect).toBe("Allow");
    expect(evaluate(workflow, request("lambda:InvokeFunction", RECORDER)).effect).toBe("Allow");
    expect(evaluate(workflow, request("lambda:InvokeFunction", `arn:aws:lambda:${at}:function:bfn-test-fn-fn_1:v3`)).effect).toBe("Allow");
    // …and nothing of each other's.
    expect(evaluate(recorder, request("lambda:InvokeFunction", RECORDER)).effect).toBe("ImplicitDeny");
    expect(evaluate(recorder, request("lambda:InvokeFunction", `arn:aws:lambda:${at}:function:bfn-test-fn-fn_1:v3`)).effect).toBe("ImplicitDeny");
  });

  it("lets the recorder and the sweeper start queued runs on the run workflow only (presigning their uploads), and nothing more", () => {
    const sweeper = policies.roleStatements(policies.roleOfFunction("bfn-test-run-sweeper"));
    const key = policies.arn(policies.logicalId("AWS::KMS::Key", "SecretsKey"));
    for (const dispatcher of [recorder, sweeper]) {
      expect(evaluate(dispatcher, request("states:StartExecution", RUNS)).effect).toBe("Allow");
      expect(evaluate(dispatcher, request("s3:PutObject", `${BUCKET}/outcomes/run_1/artifact-0`)).effect).toBe("Allow");
      // Only the recorder writes artifacts/ (its copies of the artifacts a run keeps); signing needs outcomes/ only.
      expect(evaluate(dispatcher, request("s3:PutObject", `${BUCKET}/artifacts/run_1/report.csv`)).effect).toBe(dispatcher === recorder ? "Allow" : "ImplicitDeny");
      expect(evaluate(dispatcher, request("kms:Decrypt", key, { "kms:EncryptionContext:function_id": "fn_1" })).effect).toBe("Allow");
      for (const [action, resource, context] of [
        ["states:StartExecution", `arn:aws:states:${at}:stateMachine:another-machine`, {}],
        ["states:StopExecution", `arn:aws:states:${at}:execution:bfn-test-runs:run_victim`, {}],
        ["s3:PutObject", `${BUCKET}/elsewhere/run_1.json`, {}],
        ["lambda:InvokeFunction", `arn:aws:lambda:${at}:function:bfn-test-fn-fn_1:v3`, {}],
        ["kms:Encrypt", key, { "kms:EncryptionContext:function_id": "fn_1" }],
        ["kms:Decrypt", key, {}],
      ] as const) {
        expect([action, resource, evaluate(dispatcher, request(action, resource, context)).effect]).toEqual([action, resource, "ImplicitDeny"]);
      }
    }
  });

  it("lets the functions' execution role open its own secrets, and reach no part of the run pipeline", () => {
    const key = policies.arn(policies.logicalId("AWS::KMS::Key", "SecretsKey"));
    const self = "AROAEXAMPLEEXECUTION:bfn-test-fn-fn_1";
    expect(evaluate(execution, request("kms:Decrypt", key, { "aws:userid": self, "kms:EncryptionContext:runner": self })).effect).toBe("Allow");
    expect(evaluate(execution, request("kms:Decrypt", key, { "aws:userid": self, "kms:EncryptionContext:runner": "AROAEXAMPLEEXECUTION:bfn-test-fn-fn_2" })).effect).toBe("ImplicitDeny");
    for (const [action, resource] of [
      ["lambda:InvokeFunction", RECORDER],
      ["lambda:InvokeFunction", `arn:aws:lambda:${at}:function:bfn-test-fn-fn_2:v1`],
      ["states:StartExecution", RUNS],
      ["states:StopExecution", `arn:aws:states:${at}:execution:bfn-test-runs:run_victim`],
      ["s3:PutObject", `${BUCKET}/outcomes/run_victim.json`],
      ["s3:GetObject", `${BUCKET}/artifacts/run_victim/report.csv`],
    ] as const) {
      expect([action, evaluate(execution, request(action, resource)).effect]).toEqual([action, "ImplicitDeny"]);
    }
  });

  it("lets the authorizer, the recorder, the sweeper and the webhook Lambda put only into their own partitions: no API key, no batch (#23.9)", () => {
    const table = policies.arn(policies.logicalId("AWS::DynamoDB::GlobalTable", "Datamain"));
    const put = (statements: Statement[], leadingKey: string) => evaluate(statements, request("dynamodb:PutItem", table, { "dynamodb:LeadingKeys": leadingKey })).effect;
    const authorizer = policies.roleStatements(policies.roleOfFunction("bfn-test-authorizer"));
    const sweeper = policies.roleStatements(policies.roleOfFunction("bfn-test-run-sweeper"));
    const delivery = policies.roleStatements(policies.roleOfFunction("bfn-test-webhook-delivery"));
    expect(put(authorizer, "ACCOUNT#acct_new")).toBe("Allow");
    for (const dispatcher of [recorder, sweeper]) {
      for (const key of ["RUN#run_1", "FNID#fn_1", "ACCOUNT#acct_1", "QUEUE#acct_1"]) expect([key, put(dispatcher, key)]).toEqual([key, "Allow"]);
    }
    expect(put(delivery, "FNID#fn_1")).toBe("Allow");
    // A forged API key (KEY#<hash>: the authorizer would accept it), a batch, an idempotency claim.
    for (const [name, role] of [["authorizer", authorizer], ["recorder", recorder], ["sweeper", sweeper], ["delivery", delivery]] as const) {
      for (const key of ["KEY#forged", "BATCH#batch_1", "IDEM#acct_1#fn_1", "RUN#run_1", "ACCOUNT#acct_1"]) {
        if ((name === "recorder" || name === "sweeper") && (key.startsWith("RUN#") || key.startsWith("ACCOUNT#"))) continue;
        if (name === "authorizer" && key.startsWith("ACCOUNT#")) continue;
        expect([name, key, put(role, key)]).toEqual([name, key, "ImplicitDeny"]);
      }
    }
  });

  it("lets a run create no log group and write no log stream, another function's in the shared group least (#23.4)", () => {
    const group = "arn:aws:logs:" + at + ":log-group:/browserfn/bfn-test/functions";
    for (const [action, resource] of [
      // Another function's streams in the shared group: forged or flooded by a run (allowed before).
      ["logs:CreateLogStream", `${group}:log-stream:2026/11/28/bfn-test-fn-fn_2[1]forged`],
      ["logs:PutLogEvents", `${group}:log-stream:2026/11/28/bfn-test-fn-fn_2[1]0123456789abcdef`],
      // Its own too: IAM cannot tell a function's streams from another's there (named after the function, not the session).
      ["logs:PutLogEvents", `${group}:log-stream:2026/11/28/bfn-test-fn-fn_1[3]0123456789abcdef`],
      // No group of any name: each would be kept forever, with no retention.
      ["logs:CreateLogGroup", `arn:aws:logs:${at}:log-group:/aws/lambda/bfn-test-fn-fn_1`],
      ["logs:CreateLogGroup", `arn:aws:logs:${at}:log-group:/aws/lambda/bfn-test-fn-flood_1`],
      ["logs:CreateLogGroup", `arn:aws:logs:${at}:log-group:/browserfn/bfn-test/functions2`],
      // Lambda's default groups of other functions, and the service's own handlers' groups.
      ["logs:CreateLogStream", `arn:aws:logs:${at}:log-group:/aws/lambda/bfn-test-fn-fn_2:log-stream:forged`],
      ["logs:PutLogEvents", `arn:aws:logs:${at}:log-group:/aws/lambda/bfn-test-fn-fn_2:log-stream:2026/11/28/[1]abc`],
      ["logs:PutLogEvents", `arn:aws:logs:${at}:log-group:/aws/lambda/bfn-test-run-recorder:log-stream:2026/11/28/[1]abc`],
      ["logs:PutRetentionPolicy", group],
      ["logs:DeleteLogGroup", group],
    ] as const) {
      expect([action, resource, evaluate(execution, request(action, resource)).effect]).toEqual([action, resource, "ImplicitDeny"]);
    }
  });

  it("lets only the waiting routes make and read wait queues, only the recorder send to them, only the sweeper list and delete idle ones (#23.1)", () => {
    const wait = `arn:aws:sqs:${at}:bfn-test-wait-mk0abc-0a1b2c3d`;
    const webhooks = policies.arn(policies.logicalId("AWS::SQS::Queue", "WebhooksQueue"));
    const roleOfRoute = (operationId: string) => policies.roleStatements(policies.roleOfFunction(`bfn-test-api-${operationId}`));
    const invoke = roleOfRoute("invokePost");
    const sweeper = policies.roleStatements(policies.roleOfFunction("bfn-test-run-sweeper"));
    const others = {
      listRuns: roleOfRoute("listRuns"),
      cancelRun: roleOfRoute("cancelRun"),
      createFunction: roleOfRoute("createFunction"),
      scheduledRun: policies.roleStatements(policies.roleOfFunction("bfn-test-scheduled-run")),
      execution,
      workflow,
    };
    const waiting = ["sqs:CreateQueue", "sqs:TagQueue", "sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:DeleteQueue"];
    for (const action of waiting) expect([action, evaluate(invoke, request(action, wait)).effect]).toEqual([action, "Allow"]);
    expect(evaluate(invoke, request("sqs:SendMessage", wait)).effect).toBe("ImplicitDeny");
    expect(evaluate(recorder, request("sqs:SendMessage", wait)).effect).toBe("Allow");
    for (const action of [...waiting, "sqs:PurgeQueue", "sqs:SetQueueAttributes"]) expect([action, evaluate(recorder, request(action, wait)).effect]).toEqual([action, "ImplicitDeny"]);
    expect(evaluate(sweeper, request("sqs:DeleteQueue", wait)).effect).toBe("Allow");
    // The end of a run it writes (a failed or stopped execution) is told as the recorder tells it.
    expect(evaluate(sweeper, request("sqs:SendMessage", wait)).effect).toBe("Allow");
    expect(evaluate(sweeper, request("sqs:ListQueues", "*")).effect).toBe("Allow");
    for (const action of ["sqs:ReceiveMessage", "sqs:CreateQueue"]) expect([action, evaluate(sweeper, request(action, wait)).effect]).toEqual([action, "ImplicitDeny"]);
    for (const [name, statements] of Object.entries(others)) {
      for (const action of [...waiting, "sqs:SendMessage"]) expect([name, action, evaluate(statements, request(action, wait)).effect]).toEqual([name, action, "ImplicitDeny"]);
    }
    // The pattern reaches no other queue: not another stack's wait queues, not the webhook queue
    // (which the recorder and the invoke routes may send to, and nothing more).
    for (const queue of [`arn:aws:sqs:${at}:other-wait-mk0abc-0a1b2c3d`, `arn:aws:sqs:${at}:bfn-test-waitx`]) {
      for (const [role, action] of [[invoke, "sqs:DeleteQueue"], [invoke, "sqs:ReceiveMessage"], [recorder, "sqs:SendMessage"], [sweeper, "sqs:DeleteQueue"], [sweeper, "sqs:SendMessage"]] as const) {
        expect([queue, action, evaluate(role, request(action, queue)).effect]).toEqual([queue, action, "ImplicitDeny"]);
      }
    }
    for (const [role, action] of [[invoke, "sqs:DeleteQueue"], [invoke, "sqs:ReceiveMessage"], [recorder, "sqs:DeleteQueue"], [sweeper, "sqs:DeleteQueue"]] as const) {
      expect([action, evaluate(role, request(action, webhooks)).effect]).toEqual([action, "ImplicitDeny"]);
    }
  });

  it("would have let the functions invoke the completion Lambda under the old design's statement (git show e137d39^:lib/functionRuntime.ts)", () => {
    // FunctionRuntime.allowCompletionDestination before the run pipeline, exactly as it was built.
    const old = testStack();
    const role = old.node.findAll().find((c) => c instanceof Role && c.node.path.endsWith("FunctionRuntime/ExecutionRole")) as Role;
    const completionArn = `arn:${Aws.PARTITION}:lambda:${Aws.REGION}:${Aws.ACCOUNT_ID}:function:bfn-test-run-completion`;
    role.addToPolicy(new PolicyStatement({ actions: ["lambda:InvokeFunction"], resources: [completionArn] }));
    const oldPolicies = policiesOf(Template.fromStack(old).toJSON() as TemplateJson);
    const oldExecution = oldPolicies.roleStatements(oldPolicies.logicalId("AWS::IAM::Role", "FunctionRuntimeExecutionRole"));
    const completion = `arn:aws:lambda:${at}:function:bfn-test-run-completion`;
    expect(evaluate(oldExecution, request("lambda:InvokeFunction", completion))).toMatchObject({ effect: "Allow", statement: { Action: "lambda:InvokeFunction", Resource: completion } });
    expect(evaluate(execution, request("lambda:InvokeFunction", completion)).effect).toBe("ImplicitDeny");
  });
});
