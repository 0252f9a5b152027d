import { AWS_ENV } from "../../lambdas/aws/awsConfig";
import { DEFAULT_PLANS } from "../../lambdas/config/plans";

/**
 * The environment a route Lambda's entry parses (lambdas/aws/awsConfig.ts), as the stack sets
 * it; values are stand-ins, nothing is called.
 */
export const SERVICE_LAMBDA_ENV: Record<string, string> = {
  AWS_REGION: "eu-west-1",
  [AWS_ENV.tablePrefix]: "bfn",
  [AWS_ENV.plans]: JSON.stringify(DEFAULT_PLANS),
  [AWS_ENV.functionPrefix]: "bfn-fn-",
  [AWS_ENV.executionRoleArn]: "arn:aws:iam::123456789012:role/exec",
  [AWS_ENV.layerArns]: "arn:aws:lambda:eu-west-1:123456789012:layer:chromium:1, arn:aws:lambda:eu-west-1:123456789012:layer:runtime:1",
  [AWS_ENV.stateMachineArn]: "arn:aws:states:eu-west-1:123456789012:stateMachine:bfn-runs",
  [AWS_ENV.runBucket]: "bfn-run-bucket",
  [AWS_ENV.secretsKeyArn]: "arn:aws:kms:eu-west-1:123456789012:key/11111111-2222-3333-4444-555555555555",
  [AWS_ENV.executionRoleId]: "AROAEXAMPLEEXECUTION",
  [AWS_ENV.webhookQueueUrl]: "https://sqs.eu-west-1.amazonaws.com/123456789012/bfn-webhooks",
  [AWS_ENV.functionLogGroup]: "/browserfn/bfn/functions",
  [AWS_ENV.scheduleGroup]: "bfn",
  [AWS_ENV.scheduleTargetArn]: "arn:aws:lambda:eu-west-1:123456789012:function:bfn-scheduled-run",
  [AWS_ENV.scheduleRoleArn]: "arn:aws:iam::123456789012:role/scheduler",
  [AWS_ENV.scheduleDeadLetterArn]: "arn:aws:sqs:eu-west-1:123456789012:dlq",
};
