import { SchedulerClient } from "@aws-sdk/client-scheduler";
import { AnalysisPool } from "../../code/analysis/analysisPool";
import { bundledWorkerScript } from "../../code/analysis/analysisWorkerScript";
import { DEFAULT_ANALYSIS_BUDGET } from "../../code/analysis/codeAnalysis";
import { type Deps, systemClock } from "../../deps";
import { createAccountQuotaCheck } from "../../runtime/aws/accountQuotas";
import { awsFunctionDeploys } from "../../runtime/aws/awsRuntime";
import { createLambdaDeployJobs } from "../../runtime/aws/deployJobs";
import { createLambdaClients } from "../../runtime/aws/lambdaClient";
import { createAwsScheduler } from "../../schedule/awsScheduler";
import { type AwsConfig, readAwsEnv } from "../awsConfig";
import { createAwsSecretBox } from "../awsDeps";
import { createRouteBase } from "./routeBase";

/** What provisions a function's Lambda (the Lambda control plane, the SDK's standard retries): the function routes' and the deploy job's. */
export function functionDeploysOf(config: AwsConfig, lambda = createLambdaClients(config.region).controlPlane) {
  return awsFunctionDeploys({
    lambda,
    functionPrefix: config.runtime.functionPrefix,
    executionRoleArn: config.runtime.executionRoleArn,
    layerArns: config.runtime.layerArns,
    logGroup: config.runtime.logGroup,
  });
}

/**
 * The `functions` routes (lib/routeRoles.ts): the table, the Lambda control plane (the deploy
 * job's queue, a function's delete, the account's quotas; deploys themselves when no deploy job
 * is set), EventBridge Scheduler, KMS (webhook signing secrets) and the code analysis worker.
 */
export function createFunctionsRouteDeps(config: AwsConfig): Deps {
  const base = createRouteBase(config, "functions routes'");
  const controlPlane = createLambdaClients(config.region).controlPlane;
  return {
    ...base,
    runtime: { ...base.runtime, ...functionDeploysOf(config, controlPlane) },
    scheduler: createAwsScheduler({ client: new SchedulerClient({ region: config.region }), ...config.schedules }),
    ...(config.deployJobFunction ? { deployJobs: createLambdaDeployJobs(controlPlane, config.deployJobFunction) } : {}),
    // The worker bundled beside this Lambda's code (lib/handlerFunction.ts); one request at a
    // time per instance, so one thread, started by the first deploy it reads.
    codeAnalysis: new AnalysisPool({ script: bundledWorkerScript(__dirname), budget: DEFAULT_ANALYSIS_BUDGET, maxWorkers: 1, log: base.log }),
    checkFunctionSettings: createAccountQuotaCheck({ client: controlPlane, maxMemoryMb: config.maxFunctionMemoryMb, clock: systemClock, log: base.log }),
    secretBox: createAwsSecretBox(config.region, { secretsKeyArn: config.secretsKeyArn, functionPrefix: config.runtime.functionPrefix, executionRoleId: config.runtime.executionRoleId }),
  };
}

export const functionsRouteDeps = (): Deps => createFunctionsRouteDeps(readAwsEnv(process.env));
