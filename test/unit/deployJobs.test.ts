import { InvokeCommand, TooManyRequestsException } from "@aws-sdk/client-lambda";
import { AWS_ENV, readAwsEnv } from "../../lambdas/aws/awsConfig";
import type { DeployJob } from "../../lambdas/deps";
import type { DeployJobDeps } from "../../lambdas/functions/deployJob";
import { createLambdaDeployJobs, makeDeployJobHandler } from "../../lambdas/runtime/aws/deployJobs";

const JOB_FUNCTION = "bfn-deploy-job";
const JOB: DeployJob = {
  kind: "deploy",
  account_id: "acme",
  function_id: "fn_01jabcdefghjkmnpqrstvwxyz0",
  name: "scraper",
  version: 3,
  deploy_id: "dep_01jabcdefghjkmnpqrstvwxyz1",
};

/** Records every command; throws the queued errors first. */
class FakeLambda {
  readonly sent: InvokeCommand[] = [];
  readonly errors: Error[] = [];

  async send(command: InvokeCommand): Promise<unknown> {
    this.sent.push(command);
    const error = this.errors.shift();
    if (error) throw error;
    return { StatusCode: 202 };
  }
}

describe("deploy jobs on AWS (createLambdaDeployJobs)", () => {
  it("queues a job as one Event invocation of the deploy-job Lambda, the job as its JSON payload", async () => {
    const lambda = new FakeLambda();
    await createLambdaDeployJobs(lambda, JOB_FUNCTION).enqueue({ ...JOB, extra: "not sent" } as DeployJob);
    expect(lambda.sent.map((command) => [command.constructor.name, command.input])).toEqual([
      ["InvokeCommand", { FunctionName: JOB_FUNCTION, InvocationType: "Event", Payload: JSON.stringify(JOB) }],
    ]);
    expect(JSON.parse(String(lambda.sent[0]?.input.Payload))).toEqual(JOB);
  });

  it("throws when Lambda refuses the job (the caller records the deploy as failed)", async () => {
    const lambda = new FakeLambda();
    lambda.errors.push(new TooManyRequestsException({ $metadata: {}, message: "Rate exceeded" }));
    await expect(createLambdaDeployJobs(lambda, JOB_FUNCTION).enqueue(JOB)).rejects.toThrow("Rate exceeded");
  });
});

describe("the deploy-job Lambda's handler (makeDeployJobHandler)", () => {
  const untouchable = new Proxy(
    {},
    {
      get: (_target, property) => {
        throw new Error(`nothing may be used for an invalid job (${String(property)})`);
      },
    },
  );

  it.each([
    ["no event", undefined],
    ["another kind", { ...JOB, kind: "delete" }],
    ["a bad function id", { ...JOB, function_id: "fn_x" }],
    ["a bad name", { ...JOB, name: "../other" }],
    ["a version that is not a positive integer", { ...JOB, version: 0 }],
    ["a version as text", { ...JOB, version: "3" }],
    ["no account", { ...JOB, account_id: undefined }],
    ["a bad deploy id", { ...JOB, deploy_id: "dep_../x" }],
    ["a deploy id that is not text", { ...JOB, deploy_id: 7 }],
  ])("logs and drops %s, touching neither store nor runtime", async (_case, event) => {
    const lines: string[] = [];
    const deps = { store: untouchable, runtime: untouchable, log: (line: string) => lines.push(line) } as unknown as DeployJobDeps;
    await expect(makeDeployJobHandler(deps)(event)).resolves.toEqual({ outcome: "invalid" });
    expect(lines).toEqual([expect.stringMatching(/^dropped an invalid deploy job: /)]);
  });

  it("throws when the store fails, so that Lambda runs the job again", async () => {
    const failing = { functions: { getByName: () => Promise.reject(new Error("ProvisionedThroughputExceeded")) } };
    const deps = { store: failing, runtime: untouchable, log: () => undefined } as unknown as DeployJobDeps;
    await expect(makeDeployJobHandler(deps)(JOB)).rejects.toThrow("ProvisionedThroughputExceeded");
  });
});

describe("the deploy-job and account-limit settings of the Lambda environment", () => {
  // Only the messages about these two variables: the rest of the environment is another test's.
  const problemsWith = (env: Record<string, string>): string[] => {
    try {
      readAwsEnv(env);
      return [];
    } catch (error) {
      return (error as Error).message.split("\n").filter((line) => /DEPLOY_JOB|MAX_FUNCTION_MEMORY/.test(line));
    }
  };

  it("accepts a function name or ARN and a memory ceiling, or neither", () => {
    expect(problemsWith({})).toEqual([]);
    expect(problemsWith({ [AWS_ENV.deployJobFunction]: "bfn-deploy-job", [AWS_ENV.maxFunctionMemoryMb]: "3008" })).toEqual([]);
    expect(problemsWith({ [AWS_ENV.deployJobFunction]: "arn:aws:lambda:eu-west-1:123456789012:function:bfn-deploy-job" })).toEqual([]);
  });

  it("names a bad value", () => {
    expect(problemsWith({ [AWS_ENV.deployJobFunction]: "bfn deploy job", [AWS_ENV.maxFunctionMemoryMb]: "64" })).toEqual([
      expect.stringContaining("BROWSERFN_DEPLOY_JOB_FUNCTION: must be a Lambda function name or ARN"),
      expect.stringContaining("BROWSERFN_MAX_FUNCTION_MEMORY_MB"),
    ]);
  });
});
