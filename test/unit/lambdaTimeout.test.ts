import { LAMBDA_TIMEOUT_MARGIN_SECONDS, lambdaDeployer, lambdaTimeoutSeconds } from "../../lambdas/runtime/aws/deployLambda";
import type { ControlPlaneCommand, LambdaSend } from "../../lambdas/runtime/aws/lambdaClient";
import { functionItem } from "../helpers/records";

describe("the Timeout of a function's Lambda", () => {
  it("is the function's timeout plus the margin the runner needs to answer with its logs, within Lambda's 900 s", () => {
    expect(LAMBDA_TIMEOUT_MARGIN_SECONDS).toBe(5);
    expect([1, 60, 300, 895, 896, 900].map(lambdaTimeoutSeconds)).toEqual([6, 65, 305, 900, 900, 900]);
  });

  it("is what configure sends to Lambda", async () => {
    const sent: ControlPlaneCommand[] = [];
    const send: LambdaSend = async <Output>(command: ControlPlaneCommand) => {
      sent.push(command);
      const ready = { State: "Active", LastUpdateStatus: "Successful" };
      return (command.constructor.name === "GetFunctionConfigurationCommand" ? ready : { Version: "1" }) as Output;
    };
    const deployer = lambdaDeployer(send, {
      runtime: "nodejs22.x", role: "arn:aws:iam::123456789012:role/fn", layers: [], logGroup: "/browserfn/functions", architecture: "x86_64",
      pollIntervalMs: 1, activeTimeoutMs: 1, sleep: async () => undefined,
    });
    await deployer.configure("bfn-x", functionItem({ timeout_seconds: 900 }));
    await deployer.configure("bfn-x", functionItem({ timeout_seconds: 30 }));
    const updates = sent.filter((command) => command.constructor.name === "UpdateFunctionConfigurationCommand");
    expect(updates.map((command) => (command.input as { Timeout?: number }).Timeout)).toEqual([900, 35]);
  });
});
