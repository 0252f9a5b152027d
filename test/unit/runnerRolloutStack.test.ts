/**
 * The runner rollout in the stack (issue #23, item 8): a custom resource whose properties are
 * the runner layer version ARNs (a new layer is an Update), run by a trigger Lambda that may
 * only invoke the rollout job; the job holds only what a move uses.
 */
import { Template } from "aws-cdk-lib/assertions";
import { handlerFunctionNames } from "../../lib/handlerGrants";
import { ROLLOUT_ACTIONS } from "../../lib/runnerRollout";
import { testStack } from "../helpers/testStack";

type Resource = { Type: string; Properties: Record<string, unknown>; DependsOn?: string[] };
type Statement = { Action: string | string[]; Resource: unknown; Condition?: unknown };

const list = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

describe("the runner rollout's custom resource", () => {
  const template = Template.fromStack(testStack());
  const resources = template.toJSON().Resources as Record<string, Resource>;
  const names = handlerFunctionNames("bfn-test");
  const idOf = (predicate: (resource: Resource) => boolean) => {
    const found = Object.entries(resources).filter(([, resource]) => predicate(resource));
    expect(found).toHaveLength(1);
    return found[0]?.[0] as string;
  };
  const lambdaNamed = (name: string) => idOf((r) => r.Type === "AWS::Lambda::Function" && r.Properties.FunctionName === name);
  const roleOf = (fnId: string) => ((resources[fnId]?.Properties.Role as { "Fn::GetAtt": string[] })["Fn::GetAtt"])[0] as string;
  const statementsOf = (roleId: string) =>
    Object.values(resources)
      .filter((r) => r.Type === "AWS::IAM::Policy" && (r.Properties.Roles as { Ref: string }[]).some((ref) => ref.Ref === roleId))
      .flatMap((r) => (r.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
  const layerIds = Object.keys(template.findResources("AWS::Lambda::LayerVersion"));
  const jobId = lambdaNamed(names.runnerRollout);
  const triggerId = lambdaNamed(names.runnerRolloutTrigger);
  const [tableId] = Object.keys(template.findResources("AWS::DynamoDB::GlobalTable"));
  const executionRoleId = Object.keys(resources).find((id) => id.startsWith("FunctionRuntimeExecutionRole") && resources[id]?.Type === "AWS::IAM::Role") as string;

  it("carries the runner layer version ARNs, is run by the trigger, and waits for the job, its rights and the execution role", () => {
    const rolloutId = idOf((r) => r.Type === "Custom::BrowserfnRunnerRollout");
    const rollout = resources[rolloutId] as Resource;
    expect(layerIds).toHaveLength(2);
    expect((rollout.Properties.RunnerLayers as { Ref: string }[]).map((ref) => ref.Ref).sort()).toEqual([...layerIds].sort());
    expect(rollout.Properties.ServiceToken).toEqual({ "Fn::GetAtt": [triggerId, "Arn"] });
    const dependsOn = rollout.DependsOn ?? [];
    expect(dependsOn).toEqual(expect.arrayContaining([jobId, roleOf(jobId), roleOf(triggerId), executionRoleId]));
    // The roles' policies too: the job may act when it is started.
    for (const roleId of [roleOf(jobId), roleOf(triggerId)]) expect(dependsOn.some((id) => id.startsWith(roleId.replace(/[A-F0-9]{8}$/, "")) && resources[id]?.Type === "AWS::IAM::Policy")).toBe(true);
  });

  it("gives the trigger the job's name and the job the stack's layers, table and function settings; one concurrent execution each", () => {
    const trigger = resources[triggerId] as Resource;
    const job = resources[jobId] as Resource;
    expect((trigger.Properties.Environment as { Variables: Record<string, unknown> }).Variables).toMatchObject({ BROWSERFN_RUNNER_ROLLOUT_FUNCTION: names.runnerRollout });
    const jobEnv = (job.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(JSON.stringify(jobEnv.BROWSERFN_LAYER_ARNS)).toEqual(expect.stringContaining(layerIds[0] as string));
    expect(JSON.stringify(jobEnv.BROWSERFN_LAYER_ARNS)).toEqual(expect.stringContaining(layerIds[1] as string));
    expect(jobEnv).toMatchObject({ BROWSERFN_TABLE_NAME: { Ref: tableId }, BROWSERFN_FUNCTION_PREFIX: "bfn-test-fn-", BROWSERFN_EXECUTION_ROLE_ARN: { "Fn::GetAtt": [executionRoleId, "Arn"] } });
    expect(job.Properties.Timeout).toBe(900);
    expect(trigger.Properties.ReservedConcurrentExecutions).toBe(1);
    expect(job.Properties.ReservedConcurrentExecutions).toBe(1);
  });

  it("lets the trigger only invoke the job, and the job only scan the table, move the prefixed Lambdas, pass the execution role and invoke itself", () => {
    const flat = (statement: Statement) => [list(statement.Action), JSON.stringify(statement.Resource)];
    const jobArn = `{"Fn::Join":["",["arn:",{"Ref":"AWS::Partition"},":lambda:",{"Ref":"AWS::Region"},":",{"Ref":"AWS::AccountId"},":function:${names.runnerRollout}"]]}`;
    const logsOf = (fnId: string) => [["logs:CreateLogStream", "logs:PutLogEvents"], JSON.stringify({ "Fn::GetAtt": [`${fnId.replace(/[A-F0-9]{8}$/, "")}Logs${Object.keys(resources).find((id) => id.startsWith(`${fnId.replace(/[A-F0-9]{8}$/, "")}Logs`))?.slice(-8)}`, "Arn"] })];
    expect(statementsOf(roleOf(triggerId)).map(flat)).toEqual([[["lambda:InvokeFunction"], jobArn], logsOf(triggerId)]);
    const job = statementsOf(roleOf(jobId));
    expect(job.map((s) => list(s.Action))).toEqual([
      ["dynamodb:Scan", "dynamodb:GetItem"],
      ["dynamodb:Query"],
      ROLLOUT_ACTIONS,
      ["iam:PassRole"],
      ["lambda:GetLayerVersion"],
      // Itself: its continuation, and its layers read afresh before each function (a rollback stops a rollout in flight).
      ["lambda:InvokeFunction", "lambda:GetFunctionConfiguration"],
      ["logs:CreateLogStream", "logs:PutLogEvents"],
    ]);
    expect(JSON.stringify(job[0]?.Resource)).toBe(JSON.stringify({ "Fn::GetAtt": [tableId, "Arn"] }));
    // A function found deploying is read again by id: the function-id index only.
    expect(JSON.stringify(job[1]?.Resource)).toBe(JSON.stringify({ "Fn::Join": ["", [{ "Fn::GetAtt": [tableId, "Arn"] }, "/index/gsi1"]] }));
    job.splice(1, 1);
    expect(JSON.stringify(job[1]?.Resource)).toMatch(/function:bfn-test-fn-\*"\]\]\}.*function:bfn-test-fn-\*:\*"/);
    expect(job[2]).toMatchObject({ Resource: { "Fn::GetAtt": [executionRoleId, "Arn"] }, Condition: { StringEquals: { "iam:PassedToService": "lambda.amazonaws.com" } } });
    expect((list(job[3]?.Resource) as { Ref: string }[]).map((ref) => ref.Ref).sort()).toEqual([...layerIds].sort());
    expect(JSON.stringify(job[4]?.Resource)).toBe(jobArn);
    // Nothing creates, deletes or changes code.
    expect(ROLLOUT_ACTIONS.filter((action) => /Create(Function)|Delete|UpdateFunctionCode|TagResource/.test(action))).toEqual([]);
  });
});
