import {
  type CreateAliasCommand,
  type CreateFunctionCommand,
  type DeleteFunctionCommand,
  type GetFunctionConfigurationCommand,
  type InvokeCommand,
  LambdaClient,
  type PublishVersionCommand,
  type PutFunctionEventInvokeConfigCommand,
  type UpdateAliasCommand,
  type UpdateFunctionCodeCommand,
  type UpdateFunctionConfigurationCommand,
} from "@aws-sdk/client-lambda";

/** Every Lambda command the AWS runtime adapter sends but Invoke: the control plane. */
export type ControlPlaneCommand =
  | CreateFunctionCommand
  | UpdateFunctionCodeCommand
  | UpdateFunctionConfigurationCommand
  | GetFunctionConfigurationCommand
  | PublishVersionCommand
  | CreateAliasCommand
  | UpdateAliasCommand
  | PutFunctionEventInvokeConfigCommand
  | DeleteFunctionCommand;

/** Every Lambda command the AWS runtime adapter sends. */
export type LambdaCommand = ControlPlaneCommand | InvokeCommand;

/** A LambdaClient, or a test double that records what it is sent. Its owner destroys it. */
export interface LambdaClientLike<Command = LambdaCommand> {
  send(command: Command): Promise<unknown>;
}

/** The adapter's two clients: they differ in whether the SDK may send a command again. */
export interface LambdaClients {
  /** Every command but Invoke, each retried by the SDK (see createLambdaClients). */
  controlPlane: LambdaClientLike<ControlPlaneCommand>;
  /** Invoke only, never retried by the SDK (see createLambdaClients). */
  invoke: LambdaClientLike<InvokeCommand>;
}

/** Sends a control-plane command; the caller names the part of the output it reads. */
export type LambdaSend = <Output = unknown>(command: ControlPlaneCommand) => Promise<Output>;

/**
 * Attempts per control-plane command, the first included. Lambda's control plane allows about
 * 15 requests a second per API and answers `TooManyRequestsException` ("Rate exceeded") past
 * it; every deploy polls GetFunctionConfiguration each second, so a burst of deploys reaches it.
 * The SDK's standard mode (this version) waits a random 0–1 s before the second attempt of a
 * throttled call and doubles that bound each time: 3 attempts (its default) give up within 3 s,
 * 5 spread a call over up to 15 s, past such a burst. Only deploys and deletes wait: a run's
 * Invoke goes through the other client.
 */
export const CONTROL_PLANE_MAX_ATTEMPTS = 5;

/** Lambda control-plane calls and Event invocations answer within seconds. */
const LAMBDA_REQUEST_TIMEOUT_MS = 60_000;

/**
 * The Lambda clients of the AWS runtime adapter; their owner destroys them.
 *
 * - `controlPlane`: the SDK's standard retries (throttles, 5xx, network failures) up to
 *   CONTROL_PLANE_MAX_ATTEMPTS. Each command the adapter sends there may safely arrive twice (a
 *   retry after a response was lost): a second CreateFunction or CreateAlias meets a conflict
 *   and takes the update path, an update meeting its own first attempt in progress waits and
 *   applies the same settings again, PublishVersion of unchanged code returns the same version,
 *   DeleteFunction of a deleted function is ignored, aliases and PutFunctionEventInvokeConfig
 *   are set to the same value.
 * - `invoke`: one attempt. An Invoke whose answer was lost may have queued the run: sending it
 *   again would run the user's automation twice. Throttled Invokes (Lambda queued nothing) are
 *   retried by the adapter itself, within the run's wait budget.
 */
export function createLambdaClients(region: string): { controlPlane: LambdaClient; invoke: LambdaClient } {
  const requestHandler = { requestTimeout: LAMBDA_REQUEST_TIMEOUT_MS };
  return {
    controlPlane: new LambdaClient({ region, retryMode: "standard", maxAttempts: CONTROL_PLANE_MAX_ATTEMPTS, requestHandler }),
    invoke: new LambdaClient({ region, maxAttempts: 1, requestHandler }),
  };
}

/** Matched by name: an SDK error class from another copy of the SDK still counts. */
export function isAwsError(error: unknown, name: string): boolean {
  return error instanceof Error && error.name === name;
}

/** The HTTP status an AWS SDK error came with, when it says. */
export function httpStatusOf(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
}
