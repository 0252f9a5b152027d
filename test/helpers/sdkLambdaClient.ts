import * as lambdaSdk from "@aws-sdk/client-lambda";
import type { LambdaClient } from "@aws-sdk/client-lambda";
import { createLambdaClients } from "../../lambdas/runtime/aws/lambdaClient";
import type { InProcessLambda } from "./inProcessLambda";

type CommandClass = new (input: unknown) => Parameters<InProcessLambda["send"]>[0];

/**
 * The service's control-plane client (createLambdaClients: the SDK's standard retries) sending
 * to `lambda` in this process: the SDK's own middleware runs (retries included) and only the
 * round trip (transport and deserializer, inside the retry loop) is replaced by
 * InProcessLambda.send with the same command.
 * An error it throws (e.g. a TooManyRequestsException with HTTP status 429) meets the SDK's
 * retry strategy as Lambda's answer would. The caller destroys the client.
 */
export function sdkLambdaClient(lambda: InProcessLambda): LambdaClient {
  const { controlPlane, invoke } = createLambdaClients("eu-west-1");
  invoke.destroy();
  // Requests are signed before the stand-in sees them: any credentials do.
  controlPlane.config.credentials = async () => ({ accessKeyId: "AKIDEXAMPLE", secretAccessKey: "example" });
  controlPlane.middlewareStack.add(
    (_next, context) => async (args) => {
      const Command = (lambdaSdk as unknown as Record<string, CommandClass>)[String(context.commandName)];
      if (!Command) throw new Error(`no command ${String(context.commandName)}`);
      const output = (await lambda.send(new Command(args.input))) as Record<string, unknown>;
      return { output: { ...output, $metadata: {} }, response: {} } as never;
    },
    { step: "deserialize", name: "inProcessLambda", priority: "high" },
  );
  return controlPlane;
}
