import { LambdaClient } from "@aws-sdk/client-lambda";
import type { CloudFormationCustomResourceEvent } from "aws-lambda";
import { z } from "zod";
import { ROLLOUT_ENV } from "../../rollout/rolloutEnv";
import { makeRolloutTrigger } from "../../rollout/rolloutTrigger";
import { respondToCloudFormation } from "../../stack/removeFunctionLambdas";

const TriggerEnv = z.object({ AWS_REGION: z.string().min(1), [ROLLOUT_ENV.rolloutFunction]: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/) });

/**
 * The runner rollout's custom resource (lib/runnerRollout.ts): starts the rollout job and
 * answers at once. A bad environment is answered FAILED at once, never left for CloudFormation
 * to wait out.
 */
export const handler = async (event: CloudFormationCustomResourceEvent): Promise<void> => {
  const env = TriggerEnv.safeParse(process.env);
  if (!env.success) {
    const body = { Status: "FAILED", Reason: `bad environment: ${env.error.message}`.slice(0, 1000), StackId: event.StackId, RequestId: event.RequestId, LogicalResourceId: event.LogicalResourceId };
    await respondToCloudFormation(event.ResponseURL, JSON.stringify({ ...body, PhysicalResourceId: "PhysicalResourceId" in event ? event.PhysicalResourceId : event.LogicalResourceId }));
    return;
  }
  const lambda = new LambdaClient({ region: env.data.AWS_REGION, retryMode: "standard", maxAttempts: 5 });
  try {
    await makeRolloutTrigger({
      lambda,
      rolloutFunction: env.data[ROLLOUT_ENV.rolloutFunction],
      respond: respondToCloudFormation,
      log: (line) => console.error(line),
    })(event);
  } finally {
    lambda.destroy();
  }
};
