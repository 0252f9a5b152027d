import type { FunctionItem, FunctionStatus, VersionWithCode } from "../functions/types";

export interface DeployResult {
  status: FunctionStatus;
  status_reason: string | null;
}

/**
 * The runtime port: where function code is provisioned and (with the running issue) run.
 * Adapters: local worker processes, AWS Lambda.
 */
export interface Runtime {
  /** Makes a new version runnable and says what status the function record takes. */
  deploy(fn: FunctionItem, version: VersionWithCode): Promise<DeployResult>;
  /** Releases everything the runtime holds for a deleted function. */
  remove(fn: FunctionItem): Promise<void>;
}
