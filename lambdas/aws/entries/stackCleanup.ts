import { LambdaClient } from "@aws-sdk/client-lambda";
import type { CloudFormationCustomResourceEvent } from "aws-lambda";
import { z } from "zod";
import { CLEANUP_PREFIX_ENV, makeStackCleanupHandler, respondToCloudFormation } from "../../stack/removeFunctionLambdas";

const CleanupEnv = z.object({ AWS_REGION: z.string().min(1), [CLEANUP_PREFIX_ENV]: z.string().regex(/^[A-Za-z0-9_-]{1,30}$/) });

/**
 * The stack's cleanup custom resource (lib/stackCleanup.ts). Its environment is parsed on each
 * event (a few a stack's life); a bad one is answered FAILED at once, never left for
 * CloudFormation to wait out.
 */
export const handler = async (event: CloudFormationCustomResourceEvent): Promise<void> => {
  const env = CleanupEnv.safeParse(process.env);
  if (!env.success) {
    const body = { Status: "FAILED", Reason: `bad environment: ${env.error.message}`.slice(0, 1000), StackId: event.StackId, RequestId: event.RequestId, LogicalResourceId: event.LogicalResourceId };
    await respondToCloudFormation(event.ResponseURL, JSON.stringify({ ...body, PhysicalResourceId: "PhysicalResourceId" in event ? event.PhysicalResourceId : event.LogicalResourceId }));
    return;
  }
  const lambda = new LambdaClient({ region: env.data.AWS_REGION, retryMode: "standard", maxAttempts: 8 });
  try {
    await makeStackCleanupHandler({ lambda, functionPrefix: env.data[CLEANUP_PREFIX_ENV], respond: respondToCloudFormation, log: (line) => console.error(line) })(event);
  } finally {
    lambda.destroy();
  }
};
