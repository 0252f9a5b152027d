import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { APIGatewayProxyEventV2 } from "aws-lambda";
import { principalContext } from "../../lambdas/aws/authorizerContext";
import { DEFAULT_PLANS } from "../../lambdas/config/plans";
import { MAX_BODY_BYTES } from "../../lambdas/config/serviceConfig";
import { type Deps, systemClock } from "../../lambdas/deps";
import { createFunction } from "../../lambdas/handlers/createFunction";
import { invokePost } from "../../lambdas/handlers/invokePost";
import type { HttpResult } from "../../lambdas/http/response";
import { lambdaContext } from "../../lambdas/local/lambdaContext";
import { createAwsRuntime } from "../../lambdas/runtime/aws/awsRuntime";
import { makeRunCompletionHandler } from "../../lambdas/runtime/aws/recordCompletion";
import type { RunItem } from "../../lambdas/runs/types";
import type { Store } from "../../lambdas/store/store";
import { InProcessLambda } from "../helpers/inProcessLambda";
import { startMemoryStore } from "../helpers/memoryStore";
import { launchTestBrowser } from "../helpers/testBrowser";

// The AWS path of an invocation, end to end but for Lambda itself: the route handlers on the
// AWS runtime, a faked Lambda control plane that runs the real runner asynchronously and hands
// each ending to the real run-completion Lambda, and the store on dynalite.

const COMPLETION_ARN = "arn:aws:lambda:eu-west-1:123456789012:function:bfn-run-completion";
const SLEEPER = "export default async (ms: number) => { await new Promise((resolve) => setTimeout(resolve, ms)); return { slept: ms }; };";
const principal = principalContext({ account_id: "acme", plan: "pro", admin: false, key_id: "key_1" });

function apiEvent(method: string, rawPath: string, body: unknown, pathParameters?: Record<string, string>): APIGatewayProxyEventV2 {
  return {
    version: "2.0", routeKey: "$default", rawPath, rawQueryString: "", isBase64Encoded: false,
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    ...(pathParameters ? { pathParameters } : {}),
    requestContext: {
      accountId: "123456789012", apiId: "api", domainName: "api.example.com", domainPrefix: "api",
      http: { method, path: rawPath, protocol: "HTTP/1.1", sourceIp: "203.0.113.1", userAgent: "test" },
      requestId: `req-${Math.random()}`, routeKey: "$default", stage: "$default", time: "", timeEpoch: 0,
      authorizer: { lambda: principal },
    },
  } as unknown as APIGatewayProxyEventV2;
}

const json = (result: HttpResult) => JSON.parse(result.body ?? "null") as Record<string, unknown>;

describe("on AWS, a run that outlasts the sync window", () => {
  let memory: { store: Store; close(): Promise<void> };
  let dir: string;
  let lambda: InProcessLambda;
  let deps: Deps;
  /** Set once the handler answered: Lambda freezes its container, so its reads of the run never come back. */
  let frozen = false;

  beforeAll(async () => {
    memory = await startMemoryStore();
    dir = await mkdtemp(path.join(tmpdir(), "browserfn-aws-runs-"));
    await chmod(dir, 0o755);
    const log = (line: string) => void console.error(line);
    const recorder = makeRunCompletionHandler({ store: memory.store, clock: systemClock, log });
    lambda = new InProcessLambda(dir, { [COMPLETION_ARN]: recorder }, launchTestBrowser);
    const runs = { get: (runId: string) => (frozen ? new Promise<RunItem | undefined>(() => undefined) : memory.store.runs.get(runId)) };
    const runtime = createAwsRuntime({
      lambda, functionPrefix: "bfn-", executionRoleArn: "arn:aws:iam::1:role/fn", layerArns: [], logGroup: "/browserfn/test/functions", pollIntervalMs: 1,
      completionArn: COMPLETION_ARN, runs, runPollIntervalMs: 50,
    });
    const unused = () => Promise.reject(new Error("not used here"));
    deps = {
      store: memory.store,
      identity: { authenticate: unused, forget: () => undefined },
      runtime,
      scheduler: { check: () => undefined, sync: async () => undefined, remove: async () => undefined, close: async () => undefined },
      clock: systemClock,
      config: { plans: DEFAULT_PLANS, publicUrl: null, syncWaitSeconds: 1, maxBodyBytes: MAX_BODY_BYTES },
      log,
    };
    const created = await createFunction(deps)(apiEvent("POST", "/functions", { name: "sleeper", code: SLEEPER }), lambdaContext("createFunction", "req"));
    expect([created.statusCode, json(created).status]).toEqual([201, "active"]);
  }, 60_000);

  afterAll(async () => {
    await lambda?.close();
    await memory?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const invoke = (ms: number) =>
    invokePost(deps)(apiEvent("POST", "/functions/sleeper", { ms }, { ref: "sleeper" }), lambdaContext("invokePost", "req"));

  it("deploys each version with the run-completion Lambda as its async destination", () => {
    const configs = lambda.sent.filter((command) => command.constructor.name === "PutFunctionEventInvokeConfigCommand");
    expect(configs.map((command) => command.input)).toEqual([
      expect.objectContaining({ Qualifier: "v1", MaximumRetryAttempts: 0, DestinationConfig: { OnSuccess: { Destination: COMPLETION_ARN }, OnFailure: { Destination: COMPLETION_ARN } } }),
    ]);
  });

  it("answers within the window with the result (200), recorded and metered once", async () => {
    const answer = await invoke(50);
    expect([answer.statusCode, json(answer)]).toEqual([200, { slept: 50 }]);
    const runId = String(answer.headers?.["x-run-id"] ?? "");
    const run = await memory.store.runs.get(runId);
    expect(run).toMatchObject({ status: "succeeded", result_json: '{"slept":50}' });
    // The runner's sampled peak of its process tree (here: the test's own process): a Node process is well over 20 MB.
    expect(run?.peak_memory_mb).toBeGreaterThan(20);
    await lambda.settled();
    const [fn] = (await memory.store.functions.list("acme", 10, null)).items;
    expect((await memory.store.meters.functionCounters(fn?.function_id ?? "")).invocations).toBe(1);
  }, 30_000);

  it("answers 202 after the window, and the run still ends succeeded with its result once the handler is frozen", async () => {
    const answer = await invoke(2500);
    frozen = true;
    expect(answer.statusCode).toBe(202);
    const runId = json(answer).run_id as string;
    expect(json(answer)).toMatchObject({ run_id: runId, status: "running" });
    expect(await memory.store.runs.get(runId)).toMatchObject({ status: "running", finished_at: null });

    await lambda.settled(); // the run ends in Lambda; its destination event reaches the recorder
    const run = await memory.store.runs.get(runId);
    expect(run).toMatchObject({ status: "succeeded", result_json: '{"slept":2500}', error: null });
    expect(run?.duration_ms).toBeGreaterThanOrEqual(2500);
    const [fn] = (await memory.store.functions.list("acme", 10, null)).items;
    expect((await memory.store.meters.functionCounters(fn?.function_id ?? "")).invocations).toBe(2);
    expect(await memory.store.limits.current("acme", new Date())).toMatchObject({ inFlight: 0 });
  }, 30_000);
});
