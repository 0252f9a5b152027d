import type { Deps } from "../../deps";
import { type AwsConfig, readAwsEnv } from "../awsConfig";
import { createAwsSecretBox } from "../awsDeps";
import { createRouteBase } from "./routeBase";

/** The `secrets` routes (lib/routeRoles.ts): the table and KMS (function secrets, webhook signing secrets). */
export function createSecretsRouteDeps(config: AwsConfig): Deps {
  return {
    ...createRouteBase(config, "secrets routes'"),
    secretBox: createAwsSecretBox(config.region, { secretsKeyArn: config.secretsKeyArn, functionPrefix: config.runtime.functionPrefix, executionRoleId: config.runtime.executionRoleId }),
  };
}

export const secretsRouteDeps = (): Deps => createSecretsRouteDeps(readAwsEnv(process.env));
