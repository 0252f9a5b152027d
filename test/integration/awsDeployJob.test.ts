import { type InvokeCommand, type LambdaClient } from "@aws-sdk/client-lambda";
import { principalContext } from "../../lambdas/aws/authorizerContext";
import type { Clock, Deps } from "../../lambdas/deps";
import { STALE_DEPLOY_MS } from "../../lambdas/functions/deployLimits";
import type { FunctionItem } from "../../lambdas/functions/types";
import { createFunction } from "../../lambdas/handlers/createFunction";
import { getFunctionInfo } from "../../lambdas/handlers/getFunctionInfo";
import { invokePost } from "../../lambdas/handlers/invokePost";
import { updateFunction } from "../../lambdas/handlers/updateFunction";
import type { HttpResult } from "../../lambdas/http/response";
import { lambdaContext } from "../../lambdas/local/lambdaContext";
import { createLambdaDeployJobs, DEPLOY_JOB_FAILED_REASON, makeDeployJobHandler } from "../../lambdas/runtime/aws/deployJobs";
import type { ControlPlaneCommand, LambdaCommand } from "../../lambdas/runtime/aws/lambdaClient";
import { STUCK_DEPLOY_REASON } from "../../lambdas/runtime/aws/stuckDeploys";
import { apiGatewayEvent } from "../helpers/apiGatewayEvent";
import { type AwsPipeline, pipelineRouteDeps, startAwsPipeline } from "../helpers/awsPipeline";
import { ECHO_FN } from "../helpers/code";
import { sdkLambdaClient } from "../helpers/sdkLambdaClient";

// The AWS deploy path end to end but for AWS itself: the route handlers answer `deploying` and
// queue the deploy job (an Event Invoke of the deploy-job Lambda, through the service's
// control-plane client with the SDK's retries); the in-process Lambda runs the real job handler,
// which deploys with the real AWS runtime adapter into the Lambda stand-in and records the
// outcome on dynalite; an invocation then runs the real runner in the Lambda it deployed. The
// sweeper is the real one.

const DEPLOY_JOB = "bfn-deploy-job";
const principal = principalContext({ account_id: "acme", plan: "pro", admin: false, key_id: "key_1" });
const json = (result: HttpResult) => JSON.parse(result.body ?? "null") as Record<string, unknown>;

const apiEvent = (method: string, rawPath: string, body: unknown, pathParameters?: Record<string, string>) => apiGatewayEvent(principal, method, rawPath, body, pathParameters);

const lambdaError = (name: string, message: string, status: number) => () => Object.assign(new Error(message), { name, $metadata: { httpStatusCode: status } });
const throttled = lambdaError("TooManyRequestsException", "Rate exceeded", 429);

interface World {
  pipeline: AwsPipeline;
  deps: Deps;
  /** The route handlers' and the sweeper's clock runs this far ahead of the system's. */
  advance(ms: number): void;
  /** Held before each control-plane command the deploy job's runtime sends, when set. */
  hold: ((command: ControlPlaneCommand) => Promise<void>) | undefined;
  create(name: string, code: string): Promise<HttpResult>;
  resend(name: string, code: string): Promise<HttpResult>;
  info(name: string): Promise<Record<string, unknown>>;
  invoke(name: string, body: unknown): Promise<HttpResult>;
  stored(name: string): Promise<FunctionItem | undefined>;
  sent(name: string): LambdaCommand[];
  close(): Promise<void>;
}

async function startWorld(options: { enqueue?: "lost" } = {}): Promise<World> {
  let offset = 0;
  const clock: Clock = { now: () => new Date(Date.now() + offset) };
  // Made once the pipeline (and its Lambda stand-in) is up; the pipeline calls them later.
  const late: { control?: LambdaClient; jobHandler?: (event: unknown) => Promise<unknown> } = {};
  const world = { hold: undefined } as World;
  const pipeline = await startAwsPipeline({
    sweepClock: clock,
    // The deploy-job Lambda, invoked by its name as the route handlers' Invoke names it.
    services: { [DEPLOY_JOB]: (event) => (late.jobHandler as NonNullable<typeof late.jobHandler>)(event) },
    runtime: {
      // The adapter's control plane: the service's SDK client (standard retries) over the stand-in.
      lambda: {
        send: async (command: ControlPlaneCommand) => {
          await world.hold?.(command);
          return (late.control as LambdaClient).send(command as never);
        },
      },
    },
  });
  const control = sdkLambdaClient(pipeline.lambda);
  late.control = control;
  const log = (line: string) => void pipeline.logs.push(line);
  late.jobHandler = makeDeployJobHandler({ store: pipeline.memory.store, runtime: pipeline.runtime, log });
  const deps = pipelineRouteDeps(pipeline, {
    syncWaitSeconds: 10,
    clock,
    // "lost": the job is queued nowhere, as when the route handler stopped right after writing the record.
    deployJobs: options.enqueue === "lost" ? { enqueue: async () => undefined } : createLambdaDeployJobs(control, DEPLOY_JOB),
  });
  return Object.assign(world, {
    pipeline,
    deps,
    advance: (ms: number) => void (offset += ms),
    create: (name: string, code: string) => createFunction(deps)(apiEvent("POST", "/functions", { name, code }), lambdaContext("createFunction", "req")),
    resend: (name: string, code: string) =>
      updateFunction(deps)(apiEvent("PATCH", `/functions/${name}`, { code }, { ref: name }), lambdaContext("updateFunction", "req")),
    info: async (name: string) => json(await getFunctionInfo(deps)(apiEvent("GET", `/functions/${name}/info`, undefined, { ref: name }), lambdaContext("getFunctionInfo", "req"))),
    invoke: (name: string, body: unknown) => invokePost(deps)(apiEvent("POST", `/functions/${name}`, body, { ref: name }), lambdaContext("invokePost", "req")),
    stored: (name: string) => pipeline.memory.store.functions.getByName("acme", name),
    sent: (name: string) => pipeline.lambda.sent.filter((command) => command.constructor.name === name),
    async close() {
      await pipeline.close();
      control.destroy();
    },
  });
}

/** The deploy jobs the route handlers queued: each an Event Invoke of the deploy-job Lambda. */
function jobInvokes(world: World) {
  return world.sent("InvokeCommand")
    .map((command) => (command as InvokeCommand).input)
    .filter((input) => input.FunctionName === DEPLOY_JOB)
    .map((input) => ({ type: input.InvocationType, job: JSON.parse(String(input.Payload)) as unknown }));
}

describe("the AWS deploy job, end to end", () => {
  let world: World;

  beforeAll(async () => {
    world = await startWorld();
  }, 60_000);

  afterAll(async () => {
    await world?.close();
  });

  it("create answers 201 `deploying` at once; the job, invoked as an Event, makes it active; an invocation runs the real runner", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    // The job's Lambda waits before its first control-plane call: the answer cannot have waited for it.
    world.hold = async () => released;
    const created = await world.create("echo", ECHO_FN);
    expect([created.statusCode, json(created).status, json(created).status_reason]).toEqual([201, "deploying", null]);
    const fn = await world.stored("echo");
    expect(fn).toMatchObject({ status: "deploying", deploy_id: expect.stringMatching(/^dep_[0-9a-z]{26}$/) });
    expect(jobInvokes(world)).toEqual([
      { type: "Event", job: { kind: "deploy", account_id: "acme", function_id: fn?.function_id, name: "echo", version: 1, deploy_id: fn?.deploy_id } },
    ]);
    expect(world.sent("CreateFunctionCommand")).toEqual([]);
    expect((await world.invoke("echo", { message: "early" })).statusCode).toBe(409);

    release();
    world.hold = undefined;
    await world.pipeline.lambda.settled();
    expect(await world.info("echo")).toMatchObject({ status: "active", status_reason: null });
    expect(world.pipeline.logs).toContainEqual(`deploy job deploy ${fn?.function_id} v1: active`);
    expect(world.sent("CreateFunctionCommand")).toHaveLength(1);
    const answer = await world.invoke("echo", { message: "hi", times: 2 });
    expect([answer.statusCode, json(answer)]).toEqual([200, { echo: ["hi", "hi"] }]);
    expect(world.pipeline.lambda.events.at(-1)).toMatchObject({ params: { message: "hi", times: 2 } });
    await world.pipeline.settled();
  }, 60_000);

  it("a CreateFunction Lambda refuses ends `failed` with Lambda's reason; resending the code deploys it", async () => {
    const reason = "The role defined for the function cannot be assumed by Lambda.";
    world.pipeline.lambda.fail("CreateFunctionCommand", lambdaError("InvalidParameterValueException", reason, 400));
    const before = world.sent("CreateFunctionCommand").length;
    const created = await world.create("refused", ECHO_FN);
    expect([created.statusCode, json(created).status]).toEqual([201, "deploying"]);
    await world.pipeline.lambda.settled();
    expect(await world.info("refused")).toMatchObject({ status: "failed", status_reason: `Deploy failed: ${reason}` });
    // Not retried: Lambda's 400 says the request itself is wrong.
    expect(world.sent("CreateFunctionCommand")).toHaveLength(before + 1);
    expect((await world.invoke("refused", { message: "x" })).statusCode).toBe(409);

    const resent = await world.resend("refused", ECHO_FN);
    expect([resent.statusCode, json(resent).status, json(resent).latest_version]).toEqual([200, "deploying", "1"]);
    await world.pipeline.lambda.settled();
    expect(await world.info("refused")).toMatchObject({ status: "active", status_reason: null, latest_version: "1" });
    const answer = await world.invoke("refused", { message: "again" });
    expect(answer.statusCode).toBe(200);
    await world.pipeline.settled();
  }, 60_000);

  it("a throttled control-plane call (Rate exceeded) goes through on the SDK's standard retries", async () => {
    world.pipeline.lambda.fail("CreateFunctionCommand", throttled, 2);
    world.pipeline.lambda.fail("PublishVersionCommand", throttled, 2);
    const before = { create: world.sent("CreateFunctionCommand").length, publish: world.sent("PublishVersionCommand").length };
    await world.create("busy", ECHO_FN);
    await world.pipeline.lambda.settled();
    expect(await world.info("busy")).toMatchObject({ status: "active", status_reason: null });
    // Each sent three times: twice throttled, then accepted.
    expect(world.sent("CreateFunctionCommand").length - before.create).toBe(3);
    expect(world.sent("PublishVersionCommand").length - before.publish).toBe(3);
    expect((await world.invoke("busy", { message: "ok" })).statusCode).toBe(200);
    await world.pipeline.settled();
  }, 60_000);

  it("a job still at work when a resend (past STALE_DEPLOY_MS) starts a new deploy stops before its next change", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held = false;
    // The first job waits on its first poll of the new Lambda (as one Lambda keeps waiting for Active).
    world.hold = async (command) => {
      if (held || command.constructor.name !== "GetFunctionConfigurationCommand") return;
      held = true;
      await released;
    };
    const publishes = world.sent("PublishVersionCommand").length;
    let first: FunctionItem | undefined;
    let second: FunctionItem | undefined;
    try {
      await world.create("slow", ECHO_FN);
      first = await world.stored("slow");
      for (let i = 0; i < 100 && !held; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(held).toBe(true);

      world.advance(STALE_DEPLOY_MS + 1000);
      const resent = await world.resend("slow", ECHO_FN);
      expect(json(resent)).toMatchObject({ status: "deploying", latest_version: "1" });
      second = await world.stored("slow");
      expect(second?.deploy_id).not.toBe(first?.deploy_id);
      // The second job runs to the end while the first is held.
      for (let i = 0; i < 250 && (await world.stored("slow"))?.status !== "active"; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await world.stored("slow")).toMatchObject({ status: "active", deploy_id: second?.deploy_id });
      expect(world.sent("PublishVersionCommand").length - publishes).toBe(1);
    } finally {
      release();
      world.hold = undefined;
    }
    await world.pipeline.lambda.settled();
    // The first job asked before publishing, saw another deploy, and stopped: no second publish, nothing recorded.
    expect(world.sent("PublishVersionCommand").length - publishes).toBe(1);
    expect(world.pipeline.logs).toContainEqual(`deploy job deploy ${first?.function_id} v1: superseded`);
    expect(await world.stored("slow")).toMatchObject({ status: "active", status_reason: null, deploy_id: second?.deploy_id });
  }, 60_000);
});

describe("a deploy whose job was never queued (the route handler stopped after writing the record)", () => {
  it("is recorded failed by the scheduled sweeper once STALE_DEPLOY_MS has passed, found through the deploying index; resending the code deploys it", async () => {
    const world = await startWorld({ enqueue: "lost" });
    try {
      await world.create("orphan", ECHO_FN);
      world.advance(60_000);
      await world.create("fresh", ECHO_FN);
      expect(jobInvokes(world)).toEqual([]);
      const store = world.pipeline.memory.store;
      expect((await store.functions.listDeployingSince(new Date(Date.now() + 3_600_000), 10)).map((fn) => fn.name).sort()).toEqual(["fresh", "orphan"]);

      // Not yet: a job could still be at work.
      world.advance(STALE_DEPLOY_MS - 60_000 - 1000);
      expect(await world.pipeline.sweep()).toEqual({ settled: 0 });
      expect(await world.stored("orphan")).toMatchObject({ status: "deploying" });

      world.advance(2000);
      expect(await world.pipeline.sweep()).toEqual({ settled: 0, stuck_deploys: 1 });
      expect(await world.stored("orphan")).toMatchObject({ status: "failed", status_reason: STUCK_DEPLOY_REASON });
      expect(STUCK_DEPLOY_REASON).toBe("The deploy did not finish (it was interrupted, or its deploy job never ended); send the code again to retry");
      expect(await world.stored("fresh")).toMatchObject({ status: "deploying" });
      // It left the index: the next sweep does not read it again.
      expect((await store.functions.listDeployingSince(new Date(Date.now() + 3_600_000), 10)).map((fn) => fn.name)).toEqual(["fresh"]);

      world.advance(60_000);
      expect(await world.pipeline.sweep()).toEqual({ settled: 0, stuck_deploys: 1 });
      expect(await world.stored("fresh")).toMatchObject({ status: "failed", status_reason: STUCK_DEPLOY_REASON });
      expect(await world.pipeline.sweep()).toEqual({ settled: 0 });

      // Resending the code deploys it again (here the job is lost again: deploying, a new deploy, back in the index).
      const resent = await world.resend("orphan", ECHO_FN);
      expect(json(resent)).toMatchObject({ status: "deploying", status_reason: null });
      expect((await world.stored("orphan"))?.deploy_id).not.toBe(undefined);
      expect((await store.functions.listDeployingSince(new Date(Date.now() + 3_600_000), 10)).map((fn) => fn.name)).toEqual(["orphan"]);
    } finally {
      await world.close();
    }
  }, 60_000);

  it("a job Lambda gave up on fails its own deploy only, not a newer one of the same version", async () => {
    const world = await startWorld({ enqueue: "lost" });
    try {
      await world.create("twice", ECHO_FN);
      const first = await world.stored("twice");
      world.advance(STALE_DEPLOY_MS + 1000);
      await world.resend("twice", ECHO_FN);
      const second = await world.stored("twice");
      const jobOf = (fn: FunctionItem | undefined) => ({ kind: "deploy", account_id: "acme", function_id: fn?.function_id, name: "twice", version: 1, deploy_id: fn?.deploy_id });
      const failure = (payload: unknown) => ({
        requestContext: { functionArn: `arn:aws:lambda:eu-west-1:123456789012:function:${DEPLOY_JOB}`, condition: "RetriesExhausted" },
        requestPayload: payload,
        responsePayload: { errorType: "Error", errorMessage: "store away" },
      });
      expect(await world.pipeline.sweeper(failure(jobOf(first)))).toEqual({ settled: 0 });
      expect(await world.stored("twice")).toMatchObject({ status: "deploying", deploy_id: second?.deploy_id });
      expect(await world.pipeline.sweeper(failure(jobOf(second)))).toEqual({ settled: 1 });
      expect(await world.stored("twice")).toMatchObject({ status: "failed", status_reason: DEPLOY_JOB_FAILED_REASON });
    } finally {
      await world.close();
    }
  }, 60_000);
});
