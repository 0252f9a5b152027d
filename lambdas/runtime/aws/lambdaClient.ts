import type {
  CreateAliasCommand,
  CreateFunctionCommand,
  DeleteFunctionCommand,
  GetFunctionConfigurationCommand,
  InvokeCommand,
  PublishVersionCommand,
  PutFunctionEventInvokeConfigCommand,
  UpdateAliasCommand,
  UpdateFunctionCodeCommand,
  UpdateFunctionConfigurationCommand,
} from "@aws-sdk/client-lambda";

/** Every Lambda command the AWS runtime adapter sends. */
export type LambdaCommand =
  | CreateFunctionCommand
  | UpdateFunctionCodeCommand
  | UpdateFunctionConfigurationCommand
  | GetFunctionConfigurationCommand
  | PublishVersionCommand
  | CreateAliasCommand
  | UpdateAliasCommand
  | PutFunctionEventInvokeConfigCommand
  | InvokeCommand
  | DeleteFunctionCommand;

/** A LambdaClient, or a test double that records what it is sent. Its owner destroys it. */
export interface LambdaClientLike {
  send(command: LambdaCommand): Promise<unknown>;
}

/** Sends a command; the caller names the part of the output it reads. */
export type LambdaSend = <Output = unknown>(command: LambdaCommand) => Promise<Output>;

/** Matched by name: an SDK error class from another copy of the SDK still counts. */
export function isAwsError(error: unknown, name: string): boolean {
  return error instanceof Error && error.name === name;
}
