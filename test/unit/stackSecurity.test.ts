import { Stack, Validations } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { AwsSolutionsChecks } from "cdk-nag";
import { CONTROL_ACTIONS } from "../../lib/functionRuntime";
import { ROUTE_GROUPS } from "../../lib/routeRoles";
import { ROLLOUT_ACTIONS } from "../../lib/runnerRollout";
import { ROUTE_SPECS } from "../../lambdas/routes/routeSpecs";
import { testStack } from "../helpers/testStack";

// Least privilege, checked on the synthesized template, and cdk-nag's AWS Solutions rules.
interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, string>>;
}
type PolicyResource = { Type: string; Properties: { PolicyDocument: { Statement: Statement[] }; Roles: { Ref: string }[] } };

const list = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

/** A CloudFormation value as text, the way cdk-nag flattens it (`<AWS::Region>`, `<Logical.Arn>`). */
function flatten(value: unknown): string {
  if (typeof value === "string") return value;
  const v = value as Record<string, unknown>;
  if (v.Ref) return `<${String(v.Ref)}>`;
  if (v["Fn::GetAtt"]) return `<${(v["Fn::GetAtt"] as string[]).join(".")}>`;
  if (v["Fn::Join"]) {
    const [delimiter, parts] = v["Fn::Join"] as [string, unknown[]];
    return parts.map(flatten).join(delimiter);
  }
  return JSON.stringify(value);
}

/**
 * The only wildcards the stack may grant: names created at run time, scoped by prefix.
 * Everything else names one resource.
 */
const ALLOWED_WILDCARDS = [
  // Per-function Lambdas (created by the handlers, named <functionPrefix><function id>) and their versions/aliases.
  "arn:<AWS::Partition>:lambda:<AWS::Region>:<AWS::AccountId>:function:bfn-test-fn-*",
  "arn:<AWS::Partition>:lambda:<AWS::Region>:<AWS::AccountId>:function:bfn-test-fn-*:*",
  // One schedule per scheduled function, in browserfn's own group.
  "arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/bfn-test/*",
  // The run workflow's executions (named after their runs): StopExecution, for POST /runs/{run_id}/cancel.
  "arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:bfn-test-runs:*",
  // The waiting routes' wait queues (one per route container, made at run time: lib/waitQueues.ts).
  "arn:<AWS::Partition>:sqs:<AWS::Region>:<AWS::AccountId>:bfn-test-wait-*",
];

/** Actions that take no resource ARN (granted on "*"): X-Ray, and CloudWatch Logs' vended log delivery. */
const WITHOUT_RESOURCE = /^(xray:\w+|logs:(Create|Get|Update|Delete)LogDelivery|logs:ListLogDeliveries|logs:PutResourcePolicy|logs:DescribeResourcePolicies|logs:DescribeLogGroups)$/;

describe("the stack's permissions", () => {
  const stack = testStack();
  const template = Template.fromStack(stack);
  const policies = Object.entries(template.findResources("AWS::IAM::Policy")) as [string, PolicyResource][];
  const roles = template.findResources("AWS::IAM::Role");
  const statements = policies.flatMap(([id, policy]) => policy.Properties.PolicyDocument.Statement.map((s) => ({ policy: id, ...s })));
  const roleOf = (logicalIdStart: string) => {
    const id = Object.keys(roles).find((key) => key.startsWith(logicalIdStart));
    if (!id) throw new Error(`no role ${logicalIdStart}`);
    return id;
  };
  const [bucketId] = Object.keys(template.findResources("AWS::S3::Bucket"));
  /** Each run's uploaded outcome, outcomes/<run id>.json in the stack's run bucket. */
  const outcomeObjects = `<${bucketId}.Arn>/outcomes/*`;
  /** Each run's artifacts, artifacts/<run id>/<name>. */
  const artifactObjects = `<${bucketId}.Arn>/artifacts/*`;
  /** Profiles' states, profiles/<account hash>/<name>/<run id>.json. */
  const profileObjects = `<${bucketId}.Arn>/profiles/*`;
  /** Each run's live frame and watch marker, live/<run id>/latest.jpg and live/<run id>/watch. */
  const liveFrames = `<${bucketId}.Arn>/live/*/latest.jpg`;
  const liveMarkers = `<${bucketId}.Arn>/live/*/watch`;
  const [sweeperId] = Object.entries(template.findResources("AWS::Lambda::Function")).find(
    ([, fn]) => (fn as { Properties: { FunctionName: string } }).Properties.FunctionName === "bfn-test-run-sweeper",
  ) ?? [""];
  /** The deploy job's on-failure destination: the sweeper and its versions. */
  const sweeperVersions = `<${sweeperId}.Arn>:*`;
  const statementsOfRole = (roleId: string) =>
    policies.filter(([, p]) => p.Properties.Roles.some((r) => r.Ref === roleId)).flatMap(([, p]) => p.Properties.PolicyDocument.Statement);

  it("grants no wildcard action and no wildcard resource but the listed run-time names", () => {
    expect(statements.length).toBeGreaterThan(10);
    expect(Object.values(roles).every((role) => !(role as { Properties: { ManagedPolicyArns?: unknown } }).Properties.ManagedPolicyArns)).toBe(true);
    for (const statement of statements) {
      expect(statement.Effect).toBe("Allow");
      for (const action of list(statement.Action)) expect(action).not.toContain("*");
      for (const resource of list(statement.Resource).map(flatten)) {
        if (resource === "*") {
          // The run workflow's X-Ray tracing and log delivery: these actions take no resource.
          if (list(statement.Action).includes("lambda:GetAccountSettings")) {
            // The pre-flight check of the account's Lambda quotas: this action takes no resource either.
            expect(list(statement.Action)).toEqual(["lambda:GetAccountSettings"]);
            continue;
          }
          if (list(statement.Action).includes("lambda:ListFunctions")) {
            // The stack cleanup lists the account's Lambdas to delete the prefixed ones: no resource either.
            expect([list(statement.Action), statement.policy]).toEqual([["lambda:ListFunctions"], expect.stringMatching(/^CleanupRole/)]);
            continue;
          }
          if (list(statement.Action).includes("sqs:ListQueues")) {
            // The sweeper lists the wait queues by name prefix to delete idle ones: no resource either.
            expect([list(statement.Action), statement.policy]).toEqual([["sqs:ListQueues"], expect.stringMatching(/^HandlersRunSweeperRole/)]);
            continue;
          }
          for (const action of list(statement.Action)) expect(action).toMatch(WITHOUT_RESOURCE);
          expect(statementsOfRole(roleOf("RunPipelineRunWorkflowRole"))).toContainEqual(expect.objectContaining({ Action: statement.Action }));
        } else if (resource.includes("*")) {
          expect([...ALLOWED_WILDCARDS, outcomeObjects, artifactObjects, profileObjects, liveFrames, liveMarkers, sweeperVersions]).toContain(resource);
        }
      }
    }
  });

  it("passes roles only to their service: the execution role to Lambda, the scheduler role to Scheduler", () => {
    const passRoles = statements.filter((s) => list(s.Action).includes("iam:PassRole"));
    expect(passRoles).toHaveLength(3);
    for (const s of passRoles) expect(list(s.Action)).toEqual(["iam:PassRole"]);
    const byService = Object.fromEntries(passRoles.map((s) => [s.Condition?.StringEquals?.["iam:PassedToService"], flatten(s.Resource)]));
    expect(byService).toEqual({
      "lambda.amazonaws.com": `<${roleOf("FunctionRuntimeExecutionRole")}.Arn>`,
      "scheduler.amazonaws.com": `<${roleOf("SchedulingSchedulerRole")}.Arn>`,
    });
    // The execution role only by the deploy job (which creates the Lambdas), the scheduler's only by the route handlers.
    // The runner rollout job passes the execution role too (UpdateFunctionConfiguration with the new layers, #23.8).
    expect(passRoles.map((s) => [s.Condition?.StringEquals?.["iam:PassedToService"], s.policy.replace(/DefaultPolicy.*/, "")]).sort()).toEqual([
      ["lambda.amazonaws.com", "HandlersDeployJobRole"],
      ["lambda.amazonaws.com", "RunnerRolloutJobRole"],
      ["scheduler.amazonaws.com", "HandlersRoutesFunctionsRole"],
    ]);
  });

  it("lets the deploy job control only the prefixed function Lambdas and read only the two layers; the routes may only delete them", () => {
    const control = statements.filter((s) => list(s.Action).includes("lambda:CreateFunction"));
    expect(control).toHaveLength(1);
    expect(control[0]?.policy).toMatch(/^HandlersDeployJobRole/);
    const api = statementsOfRole(roleOf("HandlersRoutesFunctionsRole")).filter((s) => list(s.Action).some((a) => a.startsWith("lambda:")));
    expect(api.map((s) => [list(s.Action), list(s.Resource).map(flatten)])).toEqual([
      [["lambda:DeleteFunction"], ALLOWED_WILDCARDS.slice(0, 2)],
      [["lambda:GetAccountSettings"], ["*"]],
      [["lambda:InvokeFunction"], ["arn:<AWS::Partition>:lambda:<AWS::Region>:<AWS::AccountId>:function:bfn-test-deploy-job"]],
    ]);
    expect(list(control[0]?.Action)).toEqual(CONTROL_ACTIONS);
    expect(list(control[0]?.Resource).map(flatten)).toEqual(ALLOWED_WILDCARDS.slice(0, 2));
    // The deploy job and the runner rollout job (#23.8) read the two layers; nobody else.
    const layers = statements.filter((s) => list(s.Action).includes("lambda:GetLayerVersion"));
    expect(layers.map((s) => s.policy.replace(/DefaultPolicy.*/, "")).sort()).toEqual(["HandlersDeployJobRole", "RunnerRolloutJobRole"]);
    const layerIds = Object.keys(template.findResources("AWS::Lambda::LayerVersion")).map((id) => `<${id}>`);
    for (const statement of layers) expect(list(statement.Resource).map(flatten).sort()).toEqual(layerIds.sort());
    // The rollout job moves the function Lambdas (no create, no delete, no code), on the prefixed names only.
    const rollout = statementsOfRole(roleOf("RunnerRolloutJobRole")).filter((s) => list(s.Action).some((a) => a.startsWith("lambda:")));
    expect(rollout.map((s) => [list(s.Action), list(s.Resource).map(flatten)])).toEqual([
      [ROLLOUT_ACTIONS, ALLOWED_WILDCARDS.slice(0, 2)],
      [["lambda:GetLayerVersion"], expect.any(Array)],
      // Itself: its continuation, and its layers read afresh before each function (a rollback stops a rollout in flight).
      [["lambda:InvokeFunction", "lambda:GetFunctionConfiguration"], ["arn:<AWS::Partition>:lambda:<AWS::Region>:<AWS::AccountId>:function:bfn-test-runner-rollout"]],
    ]);
    const trigger = statementsOfRole(roleOf("RunnerRolloutTriggerRole"));
    expect(trigger.map((s) => list(s.Action))).toEqual([["lambda:InvokeFunction"], ["logs:CreateLogStream", "logs:PutLogEvents"]]);
    expect(list(trigger[0]?.Resource).map(flatten)).toEqual(["arn:<AWS::Partition>:lambda:<AWS::Region>:<AWS::AccountId>:function:bfn-test-runner-rollout"]);
  });

  it("gives DynamoDB access on the table and its index only; the authorizer reads (and creates accounts)", () => {
    const [tableId] = Object.keys(template.findResources("AWS::DynamoDB::GlobalTable"));
    for (const s of statements.filter((st) => list(st.Action).some((a) => a.startsWith("dynamodb:")))) {
      for (const resource of list(s.Resource).map(flatten)) expect([`<${tableId}.Arn>`, ...["gsi1", "runs", "account_runs"].map((index) => `<${tableId}.Arn>/index/${index}`)]).toContain(resource);
    }
    const authorizer = statementsOfRole(roleOf("HandlersAuthorizerRole")).filter((s) => list(s.Action).some((a) => a.startsWith("dynamodb:")));
    expect(authorizer.flatMap((s) => list(s.Action)).sort()).toEqual(["dynamodb:GetItem", "dynamodb:PutItem"]);
    const recorder = statementsOfRole(roleOf("HandlersRunRecorderRole"));
    // gsi1: the function of an ending run, by id (its webhooks).
    expect([...new Set(recorder.filter((s) => list(s.Action).some((a) => a.startsWith("dynamodb:"))).flatMap((s) => list(s.Resource)).map(flatten))]).toEqual([`<${tableId}.Arn>`, `<${tableId}.Arn>/index/gsi1`]);
    // The run queue's dispatcher after each release: claims a queued run (DeleteItem of its queue
    // item), presigns its upload URLs (PutObject) and starts its workflow; a retry reads the
    // failed attempt's parameters from its execution (DescribeExecution, the run workflow's executions only).
    expect(recorder.flatMap((s) => list(s.Action)).filter((a) => !/^(logs|sqs):/.test(a)).sort()).toEqual([
      "dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem", "kms:Decrypt", "kms:Decrypt", "kms:GenerateDataKey", "kms:GenerateDataKey", "s3:DeleteObject", "s3:DeleteObject", "s3:GetObject", "s3:GetObject", "s3:GetObject", "s3:PutObject", "s3:PutObject", "s3:PutObject", "s3:PutObject", "states:DescribeExecution", "states:StartExecution",
    ]);
    expect(recorder.filter((s) => list(s.Action).includes("states:DescribeExecution")).map((s) => ({ Action: list(s.Action), Resource: list(s.Resource).map(flatten) }))).toEqual([
      { Action: ["states:DescribeExecution"], Resource: ["arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:bfn-test-runs:*"] },
    ]);
    const runWorkflow = "arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:stateMachine:bfn-test-runs";
    // (Profiles' objects apart: checked on their own below.)
    const startsRuns = (role: Statement[]) =>
      role
        .filter((s) => list(s.Action).some((a) => a === "states:StartExecution" || a === "s3:PutObject") && !list(s.Resource).map(flatten).includes(profileObjects))
        .map((s) => ({ Action: list(s.Action), Resource: list(s.Resource).map(flatten) }));
    // Signing a run's upload forms needs s3:PutObject on its keys, all under outcomes/, and on its live frame's one key.
    const dispatcherGrants = [
      { Action: ["states:StartExecution"], Resource: [runWorkflow] },
      { Action: ["s3:PutObject"], Resource: [outcomeObjects] },
      { Action: ["s3:PutObject"], Resource: [liveFrames] },
    ];
    // The recorder also writes artifacts/ (the copies of the artifacts a run keeps, and the recordings it checked).
    expect(startsRuns(recorder)).toHaveLength(4);
    expect(startsRuns(recorder)).toEqual(expect.arrayContaining([...dispatcherGrants, { Action: ["s3:PutObject"], Resource: [artifactObjects] }]));
    // It reads and deletes the runs' uploads only (each run's prefix, swept once it is recorded); it deletes no artifact.
    const deletes = recorder.filter((s) => list(s.Action).includes("s3:DeleteObject") && !list(s.Resource).map(flatten).includes(profileObjects));
    expect(deletes.map((s) => ({ Action: list(s.Action), Resource: list(s.Resource).map(flatten) }))).toEqual([
      { Action: ["s3:GetObject", "s3:DeleteObject"], Resource: [outcomeObjects] },
    ]);
    const sweeper = statementsOfRole(roleOf("HandlersRunSweeperRole"));
    const sweeperData = sweeper.filter((s) => list(s.Action).some((a) => a.startsWith("dynamodb:")));
    expect([...new Set(sweeperData.flatMap((s) => list(s.Resource)).map(flatten))].sort()).toEqual([`<${tableId}.Arn>`, `<${tableId}.Arn>/index/gsi1`, `<${tableId}.Arn>/index/runs`]);
    // The run queue's recovery: it starts queued runs as the recorder does, and opens their secrets.
    expect(sweeper.flatMap((s) => list(s.Action)).filter((a) => !/^(logs|sqs):/.test(a)).sort()).toEqual([
      "dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem", "kms:Decrypt", "kms:Decrypt", "kms:GenerateDataKey", "kms:GenerateDataKey", "s3:DeleteObject", "s3:GetObject", "s3:GetObject", "s3:PutObject", "s3:PutObject", "s3:PutObject", "states:StartExecution",
    ]);
    expect(startsRuns(sweeper)).toEqual(dispatcherGrants);
  });

  it("lets the authorizer, the recorder, the sweeper and the webhook Lambda put items only into their partitions: never an API key (#23.9)", () => {
    const [tableId] = Object.keys(template.findResources("AWS::DynamoDB::GlobalTable"));
    const puts = (role: string) =>
      statementsOfRole(roleOf(role))
        .filter((s) => list(s.Action).includes("dynamodb:PutItem"))
        .map((s) => ({ Action: list(s.Action), Resource: list(s.Resource).map(flatten), Condition: s.Condition }));
    const only = (partitions: string[]) => [
      { Action: ["dynamodb:PutItem"], Resource: [`<${tableId}.Arn>`], Condition: { "ForAllValues:StringLike": { "dynamodb:LeadingKeys": partitions } } },
    ];
    expect(puts("HandlersAuthorizerRole")).toEqual(only(["ACCOUNT#*"]));
    // PROFILE#: the writer's leases of the profiles of the runs they start (lambdas/profiles/aws).
    expect(puts("HandlersRunRecorderRole")).toEqual(only(["RUN#*", "FNID#*", "ACCOUNT#*", "QUEUE#*", "PROFILE#*"]));
    expect(puts("HandlersRunSweeperRole")).toEqual(only(["RUN#*", "FNID#*", "ACCOUNT#*", "QUEUE#*", "PROFILE#*"]));
    expect(puts("HandlersWebhookDeliveryRole")).toEqual(only(["FNID#*"]));
    // Their other table actions are statements of their own, without PutItem.
    const authorizer = statementsOfRole(roleOf("HandlersAuthorizerRole")).filter((s) => list(s.Action).some((a) => a.startsWith("dynamodb:")));
    expect(authorizer.map((s) => list(s.Action))).toEqual([["dynamodb:GetItem"], ["dynamodb:PutItem"]]);
  });

  it("gives each group of authenticated routes a role of its own, holding what its routes touch and nothing else (#23.9)", () => {
    const functions = template.findResources("AWS::Lambda::Function") as Record<string, { Properties: { FunctionName: string; Role: { "Fn::GetAtt": [string, string] } } }>;
    const roleOfRoute = (operationId: string) => {
      const fn = Object.values(functions).find((f) => f.Properties.FunctionName === `bfn-test-api-${operationId}`);
      if (!fn) throw new Error(`no route ${operationId}`);
      return fn.Properties.Role["Fn::GetAtt"][0];
    };
    const authRoutes = ROUTE_SPECS.filter((spec) => spec.auth);
    const groupOf = new Map(Object.entries(ROUTE_GROUPS).flatMap(([group, ids]) => ids.map((id) => [id as string, group])));
    // Every authenticated route is in one group, and runs with that group's role.
    expect(authRoutes.filter((spec) => !groupOf.has(spec.operationId)).map((spec) => spec.operationId)).toEqual([]);
    for (const spec of authRoutes) {
      const group = groupOf.get(spec.operationId) ?? "";
      expect([spec.operationId, roleOfRoute(spec.operationId)]).toEqual([spec.operationId, roleOf(`HandlersRoutes${group[0]?.toUpperCase()}${group.slice(1)}Role`)]);
    }
    // Each group's actions beyond the table and its logs, exactly.
    const beyondTable = (group: string) =>
      [...new Set(statementsOfRole(roleOf(`HandlersRoutes${group}Role`)).flatMap((s) => list(s.Action)).filter((a) => !/^(logs|dynamodb):/.test(a)))].sort();
    expect(beyondTable("Data")).toEqual([]);
    expect(beyondTable("Invoke")).toEqual([
      "kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey", "s3:GetObject", "s3:PutObject",
      // Its container's wait queue (made, long-polled, rotated: lib/waitQueues.ts), and the webhook queue (send).
      "sqs:CreateQueue", "sqs:DeleteMessage", "sqs:DeleteQueue", "sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:ReceiveMessage", "sqs:SendMessage", "sqs:TagQueue",
      "states:StartExecution",
    ]);
    expect(beyondTable("Cancel")).toEqual(["sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:SendMessage", "states:StopExecution"]);
    expect(beyondTable("Functions")).toEqual([
      "iam:PassRole", "kms:Decrypt", "kms:Encrypt", "lambda:DeleteFunction", "lambda:GetAccountSettings", "lambda:InvokeFunction", "scheduler:CreateSchedule", "scheduler:DeleteSchedule", "scheduler:UpdateSchedule",
    ]);
    expect(beyondTable("Secrets")).toEqual(["kms:Decrypt", "kms:Encrypt"]);
    expect(beyondTable("Artifacts")).toEqual(["s3:GetObject"]);
    expect(beyondTable("Profiles")).toEqual(["s3:DeleteObject"]);
    // DELETE /profiles/{name} alone deletes state objects; listing and showing profiles read the table only.
    expect(roleOfRoute("deleteProfile")).toBe(roleOf("HandlersRoutesProfilesRole"));
    expect([roleOfRoute("listProfiles"), roleOfRoute("getProfile")]).toEqual([roleOf("HandlersRoutesDataRole"), roleOf("HandlersRoutesDataRole")]);
    // GET /runs/{id}/live: its run's watch marker written, its latest frame read; nothing else of the bucket.
    expect(roleOfRoute("getRunLive")).toBe(roleOf("HandlersRoutesLiveRole"));
    expect(beyondTable("Live")).toEqual(["s3:GetObject", "s3:PutObject"]);
    const s3Of = (group: string) =>
      statementsOfRole(roleOf(`HandlersRoutes${group}Role`))
        .filter((s) => list(s.Action).some((a) => a.startsWith("s3:")))
        .map((s) => ({ Action: list(s.Action), Resource: list(s.Resource).map(flatten) }));
    expect(s3Of("Live")).toEqual([
      { Action: ["s3:PutObject"], Resource: [liveMarkers] },
      { Action: ["s3:GetObject"], Resource: [liveFrames] },
    ]);
    // No other route reads frames or writes markers: the runs' starters only sign the frame's POST and the marker's HEAD.
    for (const group of ["Data", "Artifacts", "Cancel", "Functions", "Secrets"]) expect(JSON.stringify(s3Of(group))).not.toContain("/live/");
    expect(s3Of("Invoke").filter((s) => s.Resource.some((r) => r.includes("/live/")))).toEqual([
      { Action: ["s3:PutObject"], Resource: [liveFrames] },
      { Action: ["s3:GetObject"], Resource: [liveMarkers] },
    ]);
    // GET /runs: the table only (it could delete Lambdas, pass the scheduler role, start runs and use the key before).
    expect(roleOfRoute("listRuns")).toBe(roleOf("HandlersRoutesDataRole"));
  });

  it("lets only the roles that start runs sign profiles' URLs, KMS only through S3 for profiles/ objects; only the recorder, the sweeper and DELETE /profiles delete them", () => {
    const [keyId] = Object.keys(template.findResources("AWS::KMS::Key"));
    const profileGrants = (roleId: string) =>
      statementsOfRole(roleId)
        // (The run data keys' grant, GenerateDataKey with a function's context, is stackSecrets.test.ts's: not through S3.)
        .filter((s) => list(s.Resource).map(flatten).includes(profileObjects) || (list(s.Action).includes("kms:GenerateDataKey") && !JSON.stringify(s.Condition ?? {}).includes("run_data_key")))
        .map((s) => ({ Action: list(s.Action), Resource: list(s.Resource).map(flatten), ...(s.Condition ? { Condition: s.Condition as Record<string, Record<string, unknown>> } : {}) }));
    const sign = [
      { Action: ["s3:GetObject", "s3:PutObject"], Resource: [profileObjects] },
      {
        Action: ["kms:Decrypt", "kms:GenerateDataKey"],
        Resource: [`<${keyId}.Arn>`],
        Condition: {
          StringEquals: { "kms:ViaService": "s3.<AWS::Region>.amazonaws.com" },
          StringLike: { "kms:EncryptionContext:aws:s3:arn": profileObjects },
        },
      },
    ];
    const remove = { Action: ["s3:DeleteObject"], Resource: [profileObjects] };
    const flat = (grants: { Condition?: Record<string, Record<string, unknown>> }[]) =>
      grants.map((grant) =>
        grant.Condition
          ? { ...grant, Condition: Object.fromEntries(Object.entries(grant.Condition).map(([op, keys]) => [op, Object.fromEntries(Object.entries(keys).map(([key, value]) => [key, flatten(value)]))])) }
          : grant,
      );
    expect(flat(profileGrants(roleOf("HandlersRoutesInvokeRole")))).toEqual(sign);
    expect(flat(profileGrants(roleOf("HandlersScheduledRunRole")))).toEqual(sign);
    expect(flat(profileGrants(roleOf("HandlersRunRecorderRole")))).toEqual([...sign, remove]);
    expect(flat(profileGrants(roleOf("HandlersRunSweeperRole")))).toEqual([...sign, remove]);
    expect(flat(profileGrants(roleOf("HandlersRoutesProfilesRole")))).toEqual([remove]);
    // No other role touches profiles' objects or uses the key through S3; function code least of all.
    const others = Object.keys(roles).filter((id) => !/^Handlers(RoutesInvoke|ScheduledRun|RunRecorder|RunSweeper|RoutesProfiles)Role/.test(id));
    for (const id of others) expect([id, profileGrants(id)]).toEqual([id, []]);
  });

  it("lets function code open its own secrets, nothing else (no logs, no Lambda, no store, no bucket); open routes only write their logs", () => {
    const roleId = roleOf("FunctionRuntimeExecutionRole");
    // No managed or inline policy besides the statements below.
    expect((roles[roleId] as { Properties: Record<string, unknown> }).Properties.ManagedPolicyArns).toBeUndefined();
    expect((roles[roleId] as { Properties: Record<string, unknown> }).Properties.Policies).toBeUndefined();
    const [keyId] = Object.keys(template.findResources("AWS::KMS::Key"));
    // Exactly: kms:Decrypt of values sealed for the calling Lambda itself only (its secrets). No
    // CloudWatch Logs right (#23.4): a run's output comes back in the runner's answer.
    expect(statementsOfRole(roleId).map((s) => ({ Effect: s.Effect, Action: list(s.Action).sort(), Resource: list(s.Resource).map(flatten), Condition: s.Condition }))).toEqual([
      { Effect: "Allow", Action: ["kms:Decrypt"], Resource: [`<${keyId}.Arn>`], Condition: { StringEquals: { "kms:EncryptionContext:runner": "${aws:userid}" } } },
    ]);
    const open = statementsOfRole(roleOf("HandlersOpenRole"));
    expect(open.flatMap((s) => list(s.Action)).sort()).toEqual(["logs:CreateLogStream", "logs:PutLogEvents"]);
  });

  it("lets Scheduler invoke the scheduled-run Lambda only (and dead-letter to its queue)", () => {
    const scheduler = statementsOfRole(roleOf("SchedulingSchedulerRole"));
    const invoke = scheduler.filter((s) => list(s.Action).includes("lambda:InvokeFunction"));
    const [scheduledRunId] = Object.entries(template.findResources("AWS::Lambda::Function")).find(
      ([, fn]) => (fn as { Properties: { FunctionName: string } }).Properties.FunctionName === "bfn-test-scheduled-run",
    ) ?? [""];
    expect(invoke.map((s) => flatten(s.Resource))).toEqual([`<${scheduledRunId}.Arn>`]);
    const [queueId] = Object.keys(template.findResources("AWS::SQS::Queue")).filter((id) => id.startsWith("Scheduling"));
    for (const s of scheduler.filter((st) => st !== invoke[0])) expect(flatten(s.Resource)).toBe(`<${queueId}.Arn>`);
  });
});

describe("cdk-nag AWS Solutions", () => {
  it("finds nothing that is not acknowledged, and every acknowledgement has a reason and is needed", () => {
    const stack = testStack();
    const report = new AwsSolutionsChecks(stack).validateScope(stack);
    expect(report.violations.map((v) => `${v.ruleName} ${v.violatingResources.map((r) => r.constructPath).join(", ")}`)).toEqual([]);

    const acknowledged = new Map<string, string>();
    for (const construct of stack.node.findAll()) {
      for (const entry of construct.node.metadata.filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)) {
        for (const [id, reason] of Object.entries(entry.data as Record<string, string>)) acknowledged.set(id.replace(/^annotation::/i, ""), reason);
      }
    }
    expect(acknowledged.size).toBeGreaterThan(0);
    for (const reason of acknowledged.values()) expect(reason.length).toBeGreaterThanOrEqual(30);

    // The same stack without acknowledgements: every acknowledged id is a real finding.
    const acknowledge = jest.spyOn(Validations.prototype, "acknowledge").mockImplementation(() => undefined);
    try {
      const bare = testStack();
      const findings = new Set(new AwsSolutionsChecks(bare).validateScope(bare).violations.map((v) => v.ruleName));
      expect([...acknowledged.keys()].filter((id) => !findings.has(id))).toEqual([]);
      expect(Stack.of(bare).stackName).toBe("Test");
    } finally {
      acknowledge.mockRestore();
    }
  });
});
