import { readAwsEnv } from "../../lambdas/aws/awsConfig";
import { createArtifactsRouteDeps } from "../../lambdas/aws/routeDeps/artifactsRouteDeps";
import { createCancelRouteDeps } from "../../lambdas/aws/routeDeps/cancelRouteDeps";
import { createDeployJobDeps } from "../../lambdas/aws/routeDeps/deployJobDeps";
import { createFunctionsRouteDeps } from "../../lambdas/aws/routeDeps/functionsRouteDeps";
import { createInvokeRouteDeps } from "../../lambdas/aws/routeDeps/invokeRouteDeps";
import { createLiveRouteDeps } from "../../lambdas/aws/routeDeps/liveRouteDeps";
import { createProfilesRouteDeps } from "../../lambdas/aws/routeDeps/profilesRouteDeps";
import { createRouteBase } from "../../lambdas/aws/routeDeps/routeBase";
import { createSecretsRouteDeps } from "../../lambdas/aws/routeDeps/secretsRouteDeps";
import { isWithheld } from "../../lambdas/aws/routeDeps/withheldPorts";
import type { Deps } from "../../lambdas/deps";
import { SERVICE_LAMBDA_ENV } from "../helpers/awsEnv";

// #23.12: each route group's Lambda builds the ports its routes use and withholds the others
// (their clients are not in its bundle: stackBundles.test.ts). Nothing here calls AWS: a held
// port is told from a withheld one by what a call to it answers before any request is sent.

const config = readAwsEnv(SERVICE_LAMBDA_ENV);

/** Which ports hold an adapter (none is called: held ones would reach AWS). */
function heldPorts(deps: Deps): string[] {
  const held: string[] = [];
  if (!isWithheld(deps.runtime.invoke)) held.push("invoke");
  if (!isWithheld(deps.runtime.deploy) && !isWithheld(deps.runtime.configure) && !isWithheld(deps.runtime.remove)) held.push("deploys");
  if (deps.runtime.cancel && !isWithheld(deps.runtime.cancel)) held.push("cancel");
  if (deps.runtime.watchFrames) held.push("watchFrames");
  if (!isWithheld(deps.scheduler.check) && !isWithheld(deps.scheduler.sync)) held.push("scheduler");
  if (!isWithheld(deps.secretBox.open) && !isWithheld(deps.secretBox.seal)) held.push("secretBox");
  if (!isWithheld(deps.codeAnalysis.compile)) held.push("codeAnalysis");
  for (const port of ["webhooks", "artifactContent", "profileBlobs", "deployJobs", "checkFunctionSettings"] as const) if (deps[port]) held.push(port);
  return held;
}

describe("the route groups' deps (lambdas/aws/routeDeps)", () => {
  const held = async (build: () => Deps) => {
    const deps = build();
    try {
      return heldPorts(deps);
    } finally {
      await deps.codeAnalysis.close();
    }
  };

  it("hold the ports their group's routes use, and withhold the others", async () => {
    expect(await held(() => createRouteBase(config, "data routes'"))).toEqual([]);
    expect(await held(() => createInvokeRouteDeps(config))).toEqual(["invoke", "secretBox", "webhooks"]);
    expect(await held(() => createCancelRouteDeps(config))).toEqual(["cancel", "webhooks"]);
    expect(await held(() => createFunctionsRouteDeps({ ...config, deployJobFunction: "bfn-deploy-job" }))).toEqual([
      "deploys",
      "scheduler",
      "secretBox",
      "codeAnalysis",
      "deployJobs",
      "checkFunctionSettings",
    ]);
    expect(await held(() => createSecretsRouteDeps(config))).toEqual(["secretBox"]);
    expect(await held(() => createArtifactsRouteDeps(config))).toEqual(["artifactContent"]);
    expect(await held(() => createProfilesRouteDeps(config))).toEqual(["profileBlobs"]);
    expect(await held(() => createLiveRouteDeps(config))).toEqual(["watchFrames"]);
  }, 60_000);

  it("let the invoke routes hear a queued run's end on their wait queue, and keep a canceled run's slot", async () => {
    // Merged from two branches (#23): the queued-end watch was wired into createAwsRuntime only, which no route builds any more.
    const withQueues = createInvokeRouteDeps(readAwsEnv({ ...SERVICE_LAMBDA_ENV, BROWSERFN_WAIT_QUEUE_URL_PREFIX: "https://sqs.eu-west-1.amazonaws.com/123456789012/bfn-wait-" }));
    expect(typeof withQueues.runtime.watchQueuedEnd).toBe("function");
    expect(withQueues.runtime.canceledRunsRunOn).toBe(true);
    const without = createInvokeRouteDeps(config);
    expect(without.runtime.watchQueuedEnd).toBeUndefined();
    expect(without.runtime.canceledRunsRunOn).toBe(true);
    await Promise.all([withQueues.codeAnalysis.close(), without.codeAnalysis.close()]);
  });

  it("give runs started by the invoke routes their retries, and the deploy job only deploys", async () => {
    expect(createInvokeRouteDeps(config).runtime.retries).toBe(true);
    expect(createRouteBase(config, "data routes'").runtime.retries).toBeUndefined();
    const job = createDeployJobDeps(config);
    await expect(job.runtime.invoke({} as never, {} as never)).rejects.toThrow(/Starting a run is not wired into the deploy job Lambda/);
    expect(typeof job.runtime.configure).toBe("function");
    // A withheld port answers at once, with what the route's group lacks (the API's 500 internal_error, the reason in the log).
    const data = createRouteBase(config, "data routes'");
    await expect(data.secretBox.open("sealed", {})).rejects.toThrow(/Opening a secret is not wired into the data routes' Lambda/);
    expect(() => data.scheduler.check("rate(1 hour)", "UTC")).toThrow(/Checking a schedule is not wired into the data routes' Lambda/);
  });
});
