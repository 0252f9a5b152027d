import { DeleteFunctionCommand, ListFunctionsCommand, type ListFunctionsCommandOutput } from "@aws-sdk/client-lambda";
import type { CloudFormationCustomResourceEvent } from "aws-lambda";

/** The Lambda client the cleanup sends with (a LambdaClient, or a test double that records its calls). */
export interface CleanupLambda {
  send(command: ListFunctionsCommand | DeleteFunctionCommand): Promise<unknown>;
}

export interface StackCleanupDeps {
  lambda: CleanupLambda;
  /** Name prefix of the per-function Lambdas (the stack's functionPrefix): only these are removed. */
  functionPrefix: string;
  /** PUTs CloudFormation's answer to the request's presigned URL. */
  respond(url: string, body: string): Promise<void>;
  log(line: string): void;
}

const PARALLEL_DELETES = 8;

/** The environment variable naming the function prefix (AWS_ENV.functionPrefix; read here without awsConfig's imports). */
export const CLEANUP_PREFIX_ENV = "BROWSERFN_FUNCTION_PREFIX";

/**
 * Deletes every Lambda whose name starts with `functionPrefix`: the per-function Lambdas the
 * deploy job created at run time, which CloudFormation does not know. Lists every page first
 * (deleting while paging could skip names), then deletes a few at a time; one already gone is
 * fine. Returns the names deleted.
 */
export async function removeFunctionLambdas(deps: Pick<StackCleanupDeps, "lambda" | "functionPrefix">): Promise<string[]> {
  const names: string[] = [];
  let marker: string | undefined;
  do {
    const page = (await deps.lambda.send(new ListFunctionsCommand({ Marker: marker, MaxItems: 50 }))) as ListFunctionsCommandOutput;
    for (const fn of page.Functions ?? []) if (fn.FunctionName?.startsWith(deps.functionPrefix)) names.push(fn.FunctionName);
    marker = page.NextMarker;
  } while (marker);
  const queue = [...names];
  const lane = async () => {
    for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
      try {
        await deps.lambda.send(new DeleteFunctionCommand({ FunctionName: name }));
      } catch (error) {
        if ((error as { name?: string }).name !== "ResourceNotFoundException") throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_DELETES, names.length) }, lane));
  return names;
}

/**
 * The custom resource's handler (lib/stackCleanup.ts): on the stack's deletion it removes the
 * per-function Lambdas, so that `cdk destroy` leaves none of them behind, pointing at a deleted
 * role. Create and Update do nothing. A failure answers FAILED with the reason: the stack's
 * deletion stops there instead of leaving the Lambdas unnoticed.
 */
export function makeStackCleanupHandler(deps: StackCleanupDeps) {
  return async (event: CloudFormationCustomResourceEvent): Promise<void> => {
    const physicalResourceId = "PhysicalResourceId" in event ? event.PhysicalResourceId : `${event.LogicalResourceId}-function-lambdas`;
    let status: "SUCCESS" | "FAILED" = "SUCCESS";
    let reason = "";
    if (event.RequestType === "Delete") {
      try {
        const removed = await removeFunctionLambdas(deps);
        reason = `removed ${removed.length} function Lambda(s) named ${deps.functionPrefix}*`;
        deps.log(reason);
      } catch (error) {
        status = "FAILED";
        reason = `could not remove the function Lambdas named ${deps.functionPrefix}*: ${error instanceof Error ? error.message : String(error)}`.slice(0, 1000);
        deps.log(reason);
      }
    }
    const body = JSON.stringify({
      Status: status,
      Reason: reason,
      PhysicalResourceId: physicalResourceId,
      StackId: event.StackId,
      RequestId: event.RequestId,
      LogicalResourceId: event.LogicalResourceId,
    });
    await deps.respond(event.ResponseURL, body);
  };
}

/** PUTs the answer to CloudFormation's presigned S3 URL (no content type: the URL is signed without one). */
export async function respondToCloudFormation(url: string, body: string): Promise<void> {
  const response = await fetch(url, { method: "PUT", body, headers: { "content-type": "" } });
  if (!response.ok) throw new Error(`CloudFormation's response URL answered ${response.status}`);
}
