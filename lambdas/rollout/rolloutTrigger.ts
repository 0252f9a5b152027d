import { InvokeCommand } from "@aws-sdk/client-lambda";
import type { CloudFormationCustomResourceEvent } from "aws-lambda";
import { RolloutEvent } from "./rolloutJob";

/** The custom resource's property holding the runner layer version ARNs (lib/runnerRollout.ts). */
export const LAYERS_PROPERTY = "RunnerLayers";

export interface RolloutTriggerDeps {
  /** Starts the rollout job without waiting for it: an Invoke of InvocationType `Event`. */
  lambda: { send(command: InvokeCommand): Promise<unknown> };
  /** The rollout job's Lambda's name. */
  rolloutFunction: string;
  /** PUTs CloudFormation's answer to the request's presigned URL. */
  respond(url: string, body: string): Promise<void>;
  log(line: string): void;
}

/**
 * The runner rollout's custom resource handler (lib/runnerRollout.ts). Its properties carry the
 * stack's runner layer version ARNs, so a new layer is an Update. On Create and Update it starts
 * the rollout job asynchronously and answers SUCCESS at once: a rollout of thousands of functions
 * cannot fit in CloudFormation's wait, and the stack's update does not wait for it (its result
 * is in the job's log, docs/deploy.md). It answers FAILED only when the job could not be
 * started. Delete does nothing: deleted functions go with the stack's cleanup.
 */
export function makeRolloutTrigger(deps: RolloutTriggerDeps) {
  return async (event: CloudFormationCustomResourceEvent): Promise<void> => {
    const physicalResourceId = "PhysicalResourceId" in event ? event.PhysicalResourceId : `${event.LogicalResourceId}-runner-rollout`;
    let status: "SUCCESS" | "FAILED" = "SUCCESS";
    let reason = "";
    if (event.RequestType !== "Delete") {
      const job = RolloutEvent.safeParse({ kind: "runner_rollout", layers: event.ResourceProperties[LAYERS_PROPERTY], cursor: null, totals: { moved: 0, current: 0, missing: 0, failed: 0 } });
      if (!job.success) {
        status = "FAILED";
        reason = `the ${LAYERS_PROPERTY} property is not a list of layer version ARNs`;
      } else {
        try {
          await deps.lambda.send(new InvokeCommand({ FunctionName: deps.rolloutFunction, InvocationType: "Event", Payload: JSON.stringify(job.data) }));
          reason = `runner rollout started to ${job.data.layers.join(", ")}`;
        } catch (error) {
          status = "FAILED";
          reason = `could not start the runner rollout: ${error instanceof Error ? error.message : String(error)}`.slice(0, 1000);
        }
      }
      deps.log(reason);
    }
    const body = JSON.stringify({ Status: status, Reason: reason, PhysicalResourceId: physicalResourceId, StackId: event.StackId, RequestId: event.RequestId, LogicalResourceId: event.LogicalResourceId });
    await deps.respond(event.ResponseURL, body);
  };
}
