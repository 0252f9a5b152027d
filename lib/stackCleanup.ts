import { CfnFunction } from "aws-cdk-lib/aws-lambda";
import { CustomResource, Duration } from "aws-cdk-lib";
import { PolicyStatement, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import type { RetentionDays } from "aws-cdk-lib/aws-logs";
import { Construct } from "constructs";
import { AWS_ENV } from "../lambdas/aws/awsConfig";
import type { FunctionRuntime } from "./functionRuntime";
import { createHandlerFunction, grantLogWrites, HANDLER_RUNTIME } from "./handlerFunction";
import { acknowledge } from "./nag";

export interface StackCleanupProps {
  /** The cleanup Lambda's physical name. */
  functionName: string;
  runtime: FunctionRuntime;
  /** Reserve one concurrent execution for it (false with the stack's reservedConcurrency `off`). */
  reserveConcurrency: boolean;
  logRetention: RetentionDays;
}

/**
 * What `cdk destroy` must remove that CloudFormation does not know (#23.7): the per-function
 * Lambdas the deploy job creates at run time. A custom resource whose deletion (with the
 * stack's) runs lambdas/stack/removeFunctionLambdas.ts: it lists the account's Lambdas and
 * deletes those named <functionPrefix>*. It depends on the execution role, so it is deleted
 * before the role: no function is left pointing at a deleted role.
 */
export class StackCleanup extends Construct {
  readonly role: Role;

  constructor(scope: Construct, id: string, props: StackCleanupProps) {
    super(scope, id);
    this.role = new Role(this, "Role", {
      assumedBy: new ServicePrincipal("lambda.amazonaws.com"),
      description: "browserfn stack cleanup: deletes the per-function Lambdas when the stack is deleted",
    });
    // ListFunctions takes no resource; the deletes are scoped to the function prefix.
    this.role.addToPolicy(new PolicyStatement({ actions: ["lambda:ListFunctions"], resources: ["*"] }));
    acknowledge(this.role, "AwsSolutions-IAM5[Resource::*]", "lambda:ListFunctions has no resource-level permissions (AWS's design): the cleanup lists the account's Lambdas and deletes only those named with the function prefix.");
    props.runtime.grantDelete(this.role);
    const { fn, logGroup } = createHandlerFunction(this, "Function", {
      entry: "stackCleanup",
      functionName: props.functionName,
      description: "browserfn stack cleanup: on the stack's deletion, deletes the per-function Lambdas it created at run time",
      role: this.role,
      environment: { [AWS_ENV.functionPrefix]: props.runtime.functionPrefix },
      logRetention: props.logRetention,
      timeout: Duration.minutes(14),
      memorySize: 256,
    });
    // Runs once, at the stack's deletion: one at a time is all it needs (as lib/concurrencyPlan.ts reserves for every own Lambda).
    if (props.reserveConcurrency) (fn.node.defaultChild as CfnFunction).addPropertyOverride("ReservedConcurrentExecutions", 1);
    grantLogWrites(this.role, [logGroup]);
    acknowledge(fn, "AwsSolutions-L1", `The cleanup runs on ${HANDLER_RUNTIME.name}, the runtime the handlers are built and tested for (DESIGN.md); moving to a newer runtime is a deliberate, tested change.`);
    const resource = new CustomResource(this, "FunctionLambdas", { serviceToken: fn.functionArn, resourceType: "Custom::BrowserfnFunctionLambdas" });
    resource.node.addDependency(props.runtime.executionRole);
  }
}
