import { Aws, CustomResource, Duration } from "aws-cdk-lib";
import type { ITable } from "aws-cdk-lib/aws-dynamodb";
import { PolicyStatement, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import type { CfnFunction, IFunction } from "aws-cdk-lib/aws-lambda";
import type { RetentionDays } from "aws-cdk-lib/aws-logs";
import { Construct } from "constructs";
import { ROLLOUT_ENV } from "../lambdas/rollout/rolloutEnv";
import { LAYERS_PROPERTY } from "../lambdas/rollout/rolloutTrigger";
import { RUNTIME_NAMES_REASON, type FunctionRuntime } from "./functionRuntime";
import { createHandlerFunction, grantLogWrites, HANDLER_RUNTIME } from "./handlerFunction";
import { acknowledge, acknowledgeWildcards } from "./nag";

/** What the rollout does to a function's Lambda (Runtime.configure): new settings, a version, its aliases. Nothing creates or deletes. */
export const ROLLOUT_ACTIONS = [
  "lambda:GetFunctionConfiguration",
  "lambda:UpdateFunctionConfiguration",
  "lambda:PublishVersion",
  "lambda:CreateAlias",
  "lambda:UpdateAlias",
];

export interface RunnerRolloutProps {
  /** Physical names of the rollout job's Lambda and of the trigger's. */
  jobFunctionName: string;
  triggerFunctionName: string;
  runtime: FunctionRuntime;
  table: ITable;
  /** Reserve one concurrent execution for each (false with the stack's reservedConcurrency `off`). */
  reserveConcurrency: boolean;
  logRetention: RetentionDays;
}

/**
 * The runner rollout (#23.8, docs/deploy.md "Runner rollout"): a stack update that changes the
 * runner layers moves every function's live alias to them. A custom resource whose properties
 * are the layer version ARNs (a new layer is an Update) runs the trigger Lambda, which starts
 * the rollout job Lambda asynchronously and answers CloudFormation at once. The job
 * (lambdas/rollout/rolloutJob.ts) scans the function records and moves each function with
 * rollOutRunner, starting itself again near its timeout. Each Lambda holds only what it uses:
 * the trigger invokes the job; the job reads the table (Scan; a deploying function again by id), reconfigures and publishes the
 * prefixed function Lambdas, passes the execution role to Lambda, reads the two layers and
 * invokes itself.
 */
export class RunnerRollout extends Construct {
  readonly jobRole: Role;
  readonly triggerRole: Role;
  readonly job: IFunction;
  readonly resource: CustomResource;

  constructor(scope: Construct, id: string, props: RunnerRolloutProps) {
    super(scope, id);
    const { runtime } = props;
    const arnOf = (name: string) => `arn:${Aws.PARTITION}:lambda:${Aws.REGION}:${Aws.ACCOUNT_ID}:function:${name}`;
    const role = (roleId: string, description: string) => new Role(this, roleId, { assumedBy: new ServicePrincipal("lambda.amazonaws.com"), description });
    this.jobRole = role("JobRole", "browserfn runner rollout: moves every function's live alias to the stack's runner layers");
    this.triggerRole = role("TriggerRole", "browserfn runner rollout trigger: starts the rollout job on a stack update");

    // The scan of every function; a function found deploying is read again by id (gsi1, then its record) once its deploy ended.
    this.jobRole.addToPolicy(new PolicyStatement({ actions: ["dynamodb:Scan", "dynamodb:GetItem"], resources: [props.table.tableArn] }));
    this.jobRole.addToPolicy(new PolicyStatement({ actions: ["dynamodb:Query"], resources: [`${props.table.tableArn}/index/gsi1`] }));
    this.jobRole.addToPolicy(new PolicyStatement({ actions: ROLLOUT_ACTIONS, resources: runtime.functionArns }));
    acknowledgeWildcards(this.jobRole, runtime.functionArns, RUNTIME_NAMES_REASON);
    this.jobRole.addToPolicy(
      new PolicyStatement({ actions: ["iam:PassRole"], resources: [runtime.executionRole.roleArn], conditions: { StringEquals: { "iam:PassedToService": "lambda.amazonaws.com" } } }),
    );
    this.jobRole.addToPolicy(new PolicyStatement({ actions: ["lambda:GetLayerVersion"], resources: runtime.layerArns }));
    // Its continuation near its timeout: itself only (by name: a reference to its own ARN would be circular).
    // ...and its own configuration, read afresh before each function: a rollout whose layers are no longer the stack's stops.
    this.jobRole.addToPolicy(new PolicyStatement({ actions: ["lambda:InvokeFunction", "lambda:GetFunctionConfiguration"], resources: [arnOf(props.jobFunctionName)] }));
    this.triggerRole.addToPolicy(new PolicyStatement({ actions: ["lambda:InvokeFunction"], resources: [arnOf(props.jobFunctionName)] }));

    const job = createHandlerFunction(this, "Job", {
      entry: "runnerRollout",
      functionName: props.jobFunctionName,
      description: "browserfn runner rollout: moves every function's live alias to the stack's runner layers, one function at a time",
      role: this.jobRole,
      environment: {
        [ROLLOUT_ENV.table]: props.table.tableName,
        [ROLLOUT_ENV.functionPrefix]: runtime.functionPrefix,
        [ROLLOUT_ENV.executionRoleArn]: runtime.executionRole.roleArn,
        [ROLLOUT_ENV.layerArns]: runtime.layerArns.join(","),
        [ROLLOUT_ENV.functionLogGroup]: runtime.logGroup.logGroupName,
      },
      logRetention: props.logRetention,
      // Lambda's ceiling: the job hands the rest to a new invocation with ROLLOUT_MARGIN_MS left.
      timeout: Duration.minutes(15),
      memorySize: 256,
    });
    // A failed job is tried again twice (it is idempotent); what is left is in its log and re-run by hand (docs/deploy.md).
    job.fn.configureAsyncInvoke({ retryAttempts: 2, maxEventAge: Duration.hours(6) });
    const trigger = createHandlerFunction(this, "Trigger", {
      entry: "runnerRolloutTrigger",
      functionName: props.triggerFunctionName,
      description: "browserfn runner rollout trigger: on a stack update, starts the rollout job and answers CloudFormation",
      role: this.triggerRole,
      environment: { [ROLLOUT_ENV.rolloutFunction]: props.jobFunctionName },
      logRetention: props.logRetention,
      timeout: Duration.minutes(1),
      memorySize: 128,
    });
    grantLogWrites(this.jobRole, [job.logGroup]);
    grantLogWrites(this.triggerRole, [trigger.logGroup]);
    for (const { fn } of [job, trigger]) {
      // One at a time is all either needs (as lib/concurrencyPlan.ts reserves for every own Lambda): a rollout is one chain of invocations.
      if (props.reserveConcurrency) (fn.node.defaultChild as CfnFunction).addPropertyOverride("ReservedConcurrentExecutions", 1);
      acknowledge(fn, "AwsSolutions-L1", `The rollout runs on ${HANDLER_RUNTIME.name}, the runtime the handlers are built and tested for (DESIGN.md); moving to a newer runtime is a deliberate, tested change.`);
    }
    this.job = job.fn;
    this.resource = new CustomResource(this, "Layers", {
      serviceToken: trigger.fn.functionArn,
      resourceType: "Custom::BrowserfnRunnerRollout",
      properties: { [LAYERS_PROPERTY]: runtime.layerArns },
    });
    // The job runs with the new layers in its environment and its rights in place before it is started.
    for (const dependency of [job.fn, this.jobRole, this.triggerRole, runtime.executionRole]) this.resource.node.addDependency(dependency);
  }
}
