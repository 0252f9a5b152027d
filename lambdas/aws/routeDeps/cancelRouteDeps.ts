import { SFNClient } from "@aws-sdk/client-sfn";
import type { Deps } from "../../deps";
import { awsRunCancel } from "../../runtime/aws/awsRuntime";
import { type AwsConfig, readAwsEnv } from "../awsConfig";
import { createAwsWebhookOutbox } from "../awsDeps";
import { createRouteBase } from "./routeBase";

/** The `cancel` routes (lib/routeRoles.ts): the table, Step Functions (StopExecution) and the webhook queue (the run's `run.canceled`). */
export function createCancelRouteDeps(config: AwsConfig): Deps {
  const base = createRouteBase(config, "cancel routes'");
  const stepFunctions = new SFNClient({ region: config.region, retryMode: "standard", maxAttempts: 5 });
  const cancel = awsRunCancel({ stepFunctions, stateMachineArn: config.runtime.stateMachineArn, runs: base.store.runs });
  return {
    ...base,
    runtime: { ...base.runtime, cancel },
    webhooks: createAwsWebhookOutbox(base.store, config.region, config.webhookQueueUrl),
  };
}

export const cancelRouteDeps = (): Deps => createCancelRouteDeps(readAwsEnv(process.env));
