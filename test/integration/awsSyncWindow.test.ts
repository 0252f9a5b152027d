import { principalContext } from "../../lambdas/aws/authorizerContext";
import { lazyRoute } from "../../lambdas/aws/lazyHandlers";
import { createFunction } from "../../lambdas/handlers/createFunction";
import { invokePost } from "../../lambdas/handlers/invokePost";
import type { HttpResult } from "../../lambdas/http/response";
import { lambdaContext } from "../../lambdas/local/lambdaContext";
import { RunQueueState } from "../../lambdas/queue/queueState";
import { apiGatewayEvent } from "../helpers/apiGatewayEvent";
import { type AwsPipeline, pipelineRouteDeps, startAwsPipeline } from "../helpers/awsPipeline";

// #23.13: the sync window counts from API Gateway's receipt of the request
// (requestContext.timeEpoch), so the authorizer's and the route Lambda's cold starts come out of
// the window and never push the answer past API Gateway's 30 s. A request that reaches its
// handler with little of its window left answers 202 when that little is over, not a whole
// window later. The real runner and workflow behind the in-process Lambda, Step Functions and S3.

const SLEEPER = "export default async (ms: number) => { await new Promise((resolve) => setTimeout(resolve, ms)); return { slept: ms }; };";
const principal = principalContext({ account_id: "acme", plan: "pro", admin: false, key_id: "key_1" });
const WINDOW_SECONDS = 8;

describe("the sync window on AWS", () => {
  let pipeline: AwsPipeline;
  let invoke: (body: unknown, receivedMsAgo: number) => Promise<HttpResult>;
  beforeAll(async () => {
    pipeline = await startAwsPipeline({ queue: true });
    const deps = pipelineRouteDeps(pipeline, { syncWaitSeconds: WINDOW_SECONDS, queue: new RunQueueState() });
    const created = await createFunction(deps)(apiGatewayEvent(principal, "POST", "/functions", { name: "sleeper", code: SLEEPER }), lambdaContext("createFunction", "req"));
    expect(created.statusCode).toBe(201);
    const route = lazyRoute(invokePost, () => deps);
    invoke = (body, receivedMsAgo) => {
      const event = apiGatewayEvent(principal, "POST", "/functions/sleeper", body, { ref: "sleeper" });
      event.requestContext.timeEpoch = Date.now() - receivedMsAgo;
      return route(event, lambdaContext("invokePost", "req"));
    };
  }, 120_000);
  afterAll(async () => {
    await pipeline?.settled();
    await pipeline?.close();
  });

  it("takes the time before the handler (cold starts, the authorizer) out of the window", async () => {
    // Received 7.8 s of an 8 s window ago: the 1 s run cannot end within what is left.
    const late = await invoke({ ms: 1000 }, WINDOW_SECONDS * 1000 - 200);
    expect(late.statusCode).toBe(202);
    expect(JSON.parse(late.body ?? "{}")).toMatchObject({ status: expect.stringMatching(/^(running|queued)$/) });
  }, 60_000);

  it("waits the whole window for a request received just now", async () => {
    const fresh = await invoke({ ms: 10 }, 0);
    expect(fresh.statusCode).toBe(200);
    expect(JSON.parse(fresh.body ?? "{}")).toEqual({ slept: 10 });
  }, 60_000);

  it("does not believe a receipt time in the future or more than a minute old", async () => {
    const skewed = await invoke({ ms: 10 }, 120_000);
    expect(skewed.statusCode).toBe(200);
  }, 60_000);
});
