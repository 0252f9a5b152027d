import { GetFunctionConfigurationCommand, LambdaClient } from "@aws-sdk/client-lambda";
import type { Context } from "aws-lambda";
import { z } from "zod";
import { FunctionStore } from "../../store/functionStore";
import { createDocumentClient } from "../../store/dynamo";
import { makeRolloutJob } from "../../rollout/rolloutJob";
import { ROLLOUT_ENV } from "../../rollout/rolloutEnv";
import type { LambdaSend } from "../../runtime/aws/lambdaClient";

const arn = z.string().regex(/^arn:[a-z-]+:lambda:[a-z0-9-]+:\d{12}:layer:[A-Za-z0-9_-]+:\d+$/);
const JobEnv = z.object({
  AWS_REGION: z.string().min(1),
  AWS_LAMBDA_FUNCTION_NAME: z.string().min(1),
  [ROLLOUT_ENV.table]: z.string().regex(/^[A-Za-z0-9_.-]{3,255}$/),
  [ROLLOUT_ENV.functionPrefix]: z.string().regex(/^[A-Za-z0-9_-]{1,30}$/),
  [ROLLOUT_ENV.executionRoleArn]: z.string().regex(/^arn:[a-z-]+:iam::\d{12}:role\/.+$/),
  [ROLLOUT_ENV.layerArns]: z.string().transform((text) => text.split(",")).pipe(z.array(arn).min(1).max(5)),
  [ROLLOUT_ENV.functionLogGroup]: z.string().min(1).max(512),
});

/**
 * The runner rollout job (lib/runnerRollout.ts): started by the rollout's custom resource on a
 * stack update, or by hand (docs/deploy.md), and by itself to go on near its timeout. Its
 * environment is parsed once per container; a bad one throws (Lambda's retries, then the log).
 */
const built = (() => {
  let job: ReturnType<typeof makeRolloutJob> | undefined;
  return () => {
    if (job) return job;
    const env = JobEnv.parse(process.env);
    const lambda = new LambdaClient({ region: env.AWS_REGION, retryMode: "standard", maxAttempts: 8 });
    const { doc } = createDocumentClient({ region: env.AWS_REGION });
    job = makeRolloutJob({
      send: ((command) => lambda.send(command as never)) as LambdaSend,
      setup: {
        runtime: "nodejs22.x",
        role: env[ROLLOUT_ENV.executionRoleArn],
        layers: env[ROLLOUT_ENV.layerArns],
        logGroup: env[ROLLOUT_ENV.functionLogGroup],
        architecture: "x86_64",
        pollIntervalMs: 1000,
        activeTimeoutMs: 120_000,
        sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      },
      functionPrefix: env[ROLLOUT_ENV.functionPrefix],
      functions: new FunctionStore(doc, env[ROLLOUT_ENV.table]),
      // Its own Lambda's layers as the stack has them now (a rollback since this container started changes them).
      currentLayers: async () => {
        const own = await lambda.send(new GetFunctionConfigurationCommand({ FunctionName: env.AWS_LAMBDA_FUNCTION_NAME }));
        return (own.Environment?.Variables?.[ROLLOUT_ENV.layerArns] ?? "").split(",").filter((arn) => arn.length > 0);
      },
      invoke: lambda,
      jobFunction: env.AWS_LAMBDA_FUNCTION_NAME,
      log: (line) => console.error(line),
    });
    return job;
  };
})();

export const handler = async (event: unknown, context: Context) => built()(event, () => context.getRemainingTimeInMillis());
