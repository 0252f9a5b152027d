/**
 * The runner rollout (issue #23, item 8): a stack update's new runner layer reaches every
 * function's live version, through exactly these Lambda calls; old versions stay as published.
 */
import { ResourceNotFoundException } from "@aws-sdk/client-lambda";
import type { FunctionItem } from "../../lambdas/functions/types";
import type { LambdaSetup } from "../../lambdas/runtime/aws/deployLambda";
import type { LambdaCommand, LambdaSend } from "../../lambdas/runtime/aws/lambdaClient";
import { rollOutRunner } from "../../lambdas/runtime/aws/runnerRollout";
import { functionItem } from "../helpers/records";

const ROLE = "arn:aws:iam::123456789012:role/browserfn-function";
const OLD = ["arn:aws:lambda:eu-central-1:123456789012:layer:bfn-chromium:3", "arn:aws:lambda:eu-central-1:123456789012:layer:bfn-runtime:7"];
const NEW = ["arn:aws:lambda:eu-central-1:123456789012:layer:bfn-chromium:3", "arn:aws:lambda:eu-central-1:123456789012:layer:bfn-runtime:8"];
const LOG_GROUP = "/browserfn/bfn/functions";
const setup: LambdaSetup = { runtime: "nodejs22.x", role: ROLE, layers: NEW, logGroup: LOG_GROUP, architecture: "x86_64", pollIntervalMs: 1, activeTimeoutMs: 10, sleep: async () => undefined };
const config = (layers: string[], extra: Record<string, unknown> = {}) => ({
  State: "Active", LastUpdateStatus: "Successful", CodeSha256: "sha-of-v4", Layers: layers.map((Arn) => ({ Arn })), ...extra,
});
const SETTINGS = (name: string, memory: number) => ({
  FunctionName: name, Runtime: "nodejs22.x", Role: ROLE, Handler: "index.handler", MemorySize: memory, Timeout: 305, EphemeralStorage: { Size: 2048 }, Layers: NEW,
  Environment: { Variables: {} }, LoggingConfig: { LogGroup: LOG_GROUP, LogFormat: "Text" },
});

/** Lambda's control plane for three functions: `old` on the old layers, `current` on the new ones, `gone` deleted. */
function fakeLambda() {
  const sent: LambdaCommand[] = [];
  const send: LambdaSend = async <Output>(command: LambdaCommand): Promise<Output> => {
    sent.push(command);
    const input = command.input as { FunctionName: string; Qualifier?: string };
    const reply = (() => {
      switch (command.constructor.name) {
        case "GetFunctionConfigurationCommand":
          if (input.FunctionName === "bfn-gone") throw new ResourceNotFoundException({ $metadata: {}, message: "Function not found" });
          if (input.Qualifier === "live") return config(input.FunctionName === "bfn-current" ? NEW : OLD);
          return config(input.Qualifier === undefined ? NEW : OLD);
        case "PublishVersionCommand":
          return { Version: "12" };
        default:
          return {};
      }
    })();
    return reply as Output;
  };
  return { send, calls: () => sent.map((command) => [command.constructor.name, command.input]) };
}

describe("the runner rollout", () => {
  it("moves the live version of a function on an old runner layer, leaves a current one and a deleted one, exactly these calls", async () => {
    const lambda = fakeLambda();
    const functions: FunctionItem[] = [
      functionItem({ function_id: "old", latest_version: 4, memory_mb: 2048, timeout_seconds: 300 }),
      functionItem({ function_id: "current", latest_version: 2 }),
      functionItem({ function_id: "gone", latest_version: 1 }),
    ];
    const steps = await rollOutRunner(lambda.send, setup, functions, (fn) => `bfn-${fn.function_id}`);
    expect(steps).toEqual([
      { function_id: "old", outcome: "moved", layers: NEW },
      { function_id: "current", outcome: "current" },
      { function_id: "gone", outcome: "missing" },
    ]);
    expect(lambda.calls()).toEqual([
      ["GetFunctionConfigurationCommand", { FunctionName: "bfn-old", Qualifier: "live" }],
      // Runtime.configure: the code behind v4, the new settings (new layers), published over that code only.
      ["GetFunctionConfigurationCommand", { FunctionName: "bfn-old", Qualifier: "v4" }],
      ["UpdateFunctionConfigurationCommand", SETTINGS("bfn-old", 2048)],
      ["GetFunctionConfigurationCommand", { FunctionName: "bfn-old" }],
      ["PublishVersionCommand", { FunctionName: "bfn-old", CodeSha256: "sha-of-v4", Description: "browserfn version 4" }],
      ["UpdateAliasCommand", { FunctionName: "bfn-old", Name: "v4", FunctionVersion: "12" }],
      ["UpdateAliasCommand", { FunctionName: "bfn-old", Name: "live", FunctionVersion: "12" }],
      ["GetFunctionConfigurationCommand", { FunctionName: "bfn-current", Qualifier: "live" }],
      ["GetFunctionConfigurationCommand", { FunctionName: "bfn-gone", Qualifier: "live" }],
    ]);
    // Older published versions are never touched: no alias but the latest version's and live moves, nothing is deleted.
    expect(lambda.calls().filter(([name]) => /Delete/.test(String(name)))).toEqual([]);
  });

  it("reports a function Lambda would not update and goes on with the next", async () => {
    const lambda = fakeLambda();
    const failing: LambdaSend = async <Output>(command: LambdaCommand): Promise<Output> => {
      if (command.constructor.name === "UpdateFunctionConfigurationCommand" && (command.input as { FunctionName: string }).FunctionName === "bfn-old") throw new Error("Rate exceeded");
      return lambda.send<Output>(command);
    };
    const steps = await rollOutRunner(failing, setup, [functionItem({ function_id: "old", latest_version: 4 }), functionItem({ function_id: "old2", latest_version: 1 })], (fn) => `bfn-${fn.function_id}`);
    expect(steps).toEqual([
      { function_id: "old", outcome: "failed", reason: "Rate exceeded" },
      { function_id: "old2", outcome: "moved", layers: NEW },
    ]);
  });
});
