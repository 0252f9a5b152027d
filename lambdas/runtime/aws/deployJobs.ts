import { InvokeCommand } from "@aws-sdk/client-lambda";
import { z } from "zod";
import type { DeployJob, DeployJobs } from "../../deps";
import { type DeployJobDeps, type DeployJobOutcome, runDeployJob } from "../../functions/deployJob";
import { DEPLOY_ID_PATTERN } from "../../functions/ids";
import { FUNCTION_ID_PATTERN, NAME_PATTERN } from "../../schemas/functionSchemas";
import type { Store } from "../../store/store";
import type { LambdaClientLike } from "./lambdaClient";

/**
 * Deploy jobs on AWS: each is an asynchronous Invoke (InvocationType `Event`) of the deploy-job
 * Lambda with the job as its JSON payload. Lambda queues the event and answers at once; the
 * deploy-job Lambda (makeDeployJobHandler) runs it, and Lambda runs it again when it throws.
 *
 * Send it on the control-plane client (the SDK's standard retries): a job that arrives twice
 * does no harm (see runDeployJob), and Lambda's control plane throttles bursts.
 */
export function createLambdaDeployJobs(client: LambdaClientLike<InvokeCommand>, functionName: string): DeployJobs {
  return {
    async enqueue(job) {
      const payload: DeployJob = {
        kind: job.kind,
        account_id: job.account_id,
        function_id: job.function_id,
        name: job.name,
        version: job.version,
        ...(job.deploy_id === undefined ? {} : { deploy_id: job.deploy_id }),
      };
      await client.send(new InvokeCommand({ FunctionName: functionName, InvocationType: "Event", Payload: JSON.stringify(payload) }));
    },
  };
}

/** A deploy job as the deploy-job Lambda receives it, parsed field by field. */
export const DeployJobEvent = z.object({
  kind: z.enum(["deploy", "configure"]),
  account_id: z.string().min(1).max(256),
  function_id: z.string().regex(FUNCTION_ID_PATTERN),
  name: z.string().regex(NAME_PATTERN),
  version: z.int().min(1),
  deploy_id: z.string().regex(DEPLOY_ID_PATTERN).optional(),
});

/**
 * The deploy-job Lambda's handler: parses the event, runs the job and logs how it ended. An
 * event that is not a deploy job is logged and dropped (running it again cannot help); a store
 * that fails throws, so that Lambda runs the job again.
 */
export function makeDeployJobHandler(deps: DeployJobDeps) {
  return async (event: unknown): Promise<{ outcome: DeployJobOutcome | "invalid" }> => {
    const parsed = DeployJobEvent.safeParse(event);
    if (!parsed.success) {
      deps.log(`dropped an invalid deploy job: ${parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ")}`);
      return { outcome: "invalid" };
    }
    const job: DeployJob = {
      kind: parsed.data.kind,
      account_id: parsed.data.account_id,
      function_id: parsed.data.function_id,
      name: parsed.data.name,
      version: parsed.data.version,
      ...(parsed.data.deploy_id === undefined ? {} : { deploy_id: parsed.data.deploy_id }),
    };
    const outcome = await runDeployJob(deps, job);
    deps.log(`deploy job ${job.kind} ${job.function_id} v${job.version}: ${outcome}`);
    return { outcome };
  };
}

/** The status_reason of a function whose deploy job failed on every attempt. */
export const DEPLOY_JOB_FAILED_REASON = "The deploy did not finish (the deploy job failed on every attempt); send the code again to retry";

/**
 * A deploy job Lambda gave up on (its on-failure destination event: the job, and why): the
 * function it was deploying is recorded `failed`, so that it does not stay `deploying` — only
 * when that job is still its latest (a newer version has a job of its own).
 */
export async function recordFailedDeployJob(deps: { store: Pick<Store, "functions">; log: (line: string) => void }, payload: unknown, why: string): Promise<"failed" | "ignored"> {
  const parsed = DeployJobEvent.safeParse(payload);
  if (!parsed.success) return "ignored";
  const job = parsed.data;
  const fn = await deps.store.functions.getByName(job.account_id, job.name);
  if (!fn || fn.function_id !== job.function_id || fn.latest_version !== job.version || fn.status !== "deploying") return "ignored";
  // A newer deploy of the same version (a resend) has a job of its own. A job queued before deploy
  // ids names none: it is the record's only if the record has none either.
  if (job.deploy_id !== fn.deploy_id) return "ignored";
  deps.log(`deploy job ${job.kind} ${job.function_id} v${job.version} failed on every attempt: ${why.slice(0, 500)}`);
  return (await deps.store.functions.setStatus(fn, "failed", DEPLOY_JOB_FAILED_REASON, true)) ? "failed" : "ignored";
}
