import type { DeployJobDeps } from "../../functions/deployJob";
import { createDocumentClient } from "../../store/dynamo";
import { createStore } from "../../store/store";
import { type AwsConfig, readAwsEnv } from "../awsConfig";
import { functionDeploysOf } from "./functionsRouteDeps";
import { withheldRuntime } from "./withheldPorts";

/** The deploy job's deps: the table and the Lambda control plane (it provisions functions, starts no run). */
export function createDeployJobDeps(config: AwsConfig): DeployJobDeps {
  const { doc } = createDocumentClient({ region: config.region });
  const store = createStore(doc, config.tablePrefix, { runRetentionDays: config.runRetentionDays, artifactRetentionDays: config.artifactRetentionDays });
  return { store, runtime: { ...withheldRuntime("deploy job"), ...functionDeploysOf(config) }, log: (line) => console.error(line) };
}

export const deployJobDeps = (): DeployJobDeps => createDeployJobDeps(readAwsEnv(process.env));
