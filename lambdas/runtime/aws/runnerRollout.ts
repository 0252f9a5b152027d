import { type FunctionConfiguration, GetFunctionConfigurationCommand } from "@aws-sdk/client-lambda";
import type { FunctionItem } from "../../functions/types";
import { LIVE_ALIAS, type LambdaSetup, lambdaDeployer } from "./deployLambda";
import { isAwsError, type LambdaSend } from "./lambdaClient";

/** What the rollout did to one function. */
export type RolloutStep =
  | { function_id: string; outcome: "moved"; layers: string[] }
  | { function_id: string; outcome: "current" }
  | { function_id: string; outcome: "missing" }
  | { function_id: string; outcome: "failed"; reason: string };

/**
 * Moves each function's live version to the stack's current layers (the runner fix of a stack
 * update): for a function whose `live` alias runs other layers than `setup.layers`, the
 * function's settings are applied with the new layers and published as a new Lambda version of
 * its latest code (Runtime.configure: UpdateFunctionConfiguration, wait, PublishVersion guarded
 * by the CodeSha256 behind `vN`, then UpdateAlias `vN` and `live`). Functions run one at a time
 * (Lambda's control plane throttles); one that fails is reported and the rest go on. Earlier
 * Lambda versions are left as they were published, layers included: a run of an older browserfn
 * version runs its old runner, which the recorder reads while its protocol is accepted
 * (ACCEPTED_RUNNER_PROTOCOLS).
 */
export async function rollOutRunner(
  send: LambdaSend,
  setup: LambdaSetup,
  functions: Iterable<FunctionItem> | AsyncIterable<FunctionItem>,
  nameOf: (fn: FunctionItem) => string,
): Promise<RolloutStep[]> {
  const deployer = lambdaDeployer(send, setup);
  const steps: RolloutStep[] = [];
  for await (const fn of functions) {
    const name = nameOf(fn);
    let live: FunctionConfiguration;
    try {
      live = await send<FunctionConfiguration>(new GetFunctionConfigurationCommand({ FunctionName: name, Qualifier: LIVE_ALIAS }));
    } catch (error) {
      if (!isAwsError(error, "ResourceNotFoundException")) throw error;
      steps.push({ function_id: fn.function_id, outcome: "missing" });
      continue;
    }
    if ((live.Layers ?? []).map((layer) => layer.Arn).join() === setup.layers.join()) {
      steps.push({ function_id: fn.function_id, outcome: "current" });
      continue;
    }
    try {
      const result = await deployer.configure(name, fn);
      steps.push(result.status === "active" ? { function_id: fn.function_id, outcome: "moved", layers: setup.layers } : { function_id: fn.function_id, outcome: "failed", reason: result.status_reason ?? "unknown" });
    } catch (error) {
      steps.push({ function_id: fn.function_id, outcome: "failed", reason: (error as Error).message });
    }
  }
  return steps;
}
