import { type RunUploads, slotPolicy } from "../../lambdas/runner/lambdaPackage";
import { principalContext } from "../../lambdas/aws/authorizerContext";
import type { Deps } from "../../lambdas/deps";
import { createFunction } from "../../lambdas/handlers/createFunction";
import { makeScheduledRunHandler } from "../../lambdas/schedule/scheduledRunHandler";
import { deleteFunction } from "../../lambdas/handlers/deleteFunction";
import { dashboard } from "../../lambdas/handlers/dashboard";
import { getArtifact } from "../../lambdas/handlers/getArtifact";
import { invokePost } from "../../lambdas/handlers/invokePost";
import { putSecret } from "../../lambdas/handlers/putSecret";
import { DecryptCommand } from "@aws-sdk/client-kms";
import { runnerSession } from "../../lambdas/secrets/kmsSecretBox";
import type { HttpResult } from "../../lambdas/http/response";
import { lambdaContext } from "../../lambdas/local/lambdaContext";
import type { LambdaCommand } from "../../lambdas/runtime/aws/lambdaClient";
import { outcomeKey } from "../../lambdas/runtime/aws/outcomeBucket";
import { newRun } from "../../lambdas/runs/newRun";
import type { RunItem } from "../../lambdas/runs/types";
import { apiGatewayEvent } from "../helpers/apiGatewayEvent";
import { type AwsPipeline, DEAD_LETTER_URL, pipelineRouteDeps, startAwsPipeline } from "../helpers/awsPipeline";
import type { ServiceLambda } from "../helpers/inProcessLambda";
import { THROTTLE_ATTEMPTS } from "../../lambdas/runtime/aws/runWorkflow";
import { DEPLOY_JOB_FAILED_REASON } from "../../lambdas/runtime/aws/deployJobs";
import { functionZip } from "../../lambdas/runtime/aws/functionZip";
import { GetFunctionConfigurationCommand, UpdateFunctionCodeCommand } from "@aws-sdk/client-lambda";

// The AWS path of an invocation, end to end but for AWS itself: the route handlers on the AWS
// runtime adapter, the run workflow's real definition interpreted in process, the real runner
// (with a real browser) behind a faked Lambda API, the real recorder and sweeper, a stand-in S3
// on 127.0.0.1 for uploaded outcomes, and the store on dynalite.

const SLEEPER = "export default async (ms: number) => { await new Promise((resolve) => setTimeout(resolve, ms)); return { slept: ms }; };";
const BIG = 'export default async (n: number) => { console.log("making", n); return "x".repeat(n); };';
const HANGS = 'export default async () => { console.log("started"); await new Promise(() => undefined); };';
const principal = principalContext({ account_id: "acme", plan: "pro", admin: false, key_id: "key_1" });

const apiEvent = (method: string, rawPath: string, body: unknown, pathParameters?: Record<string, string>, headers: Record<string, string> = {}) =>
  apiGatewayEvent(principal, method, rawPath, body, pathParameters, headers);

const json = (result: HttpResult) => JSON.parse(result.body ?? "null") as Record<string, unknown>;

interface World {
  pipeline: AwsPipeline;
  deps: Deps;
  /** Set once a handler answered: Lambda freezes its container, so its reads of the run never come back. */
  freeze(): void;
  create(name: string, code: string, settings?: Record<string, unknown>): Promise<void>;
  invoke(name: string, body: unknown, headers?: Record<string, string>): Promise<HttpResult>;
  run(answer: HttpResult): Promise<RunItem | undefined>;
  close(): Promise<void>;
}

async function startWorld(options: Parameters<typeof startAwsPipeline>[0] = {}): Promise<World> {
  let frozen = false;
  let runs: AwsPipeline["memory"]["store"]["runs"] | undefined = undefined;
  const pipeline = await startAwsPipeline({
    // The route reads the record every 25 ms (the wait queues' fallback), as this file was
    // written for: its 1 s window leaves the notice's final read (250 ms before the window's
    // end) too little room under load, and an end the sweeper records (no notice) is only read
    // there. The notice path is awsRunEndNotices.test.ts's.
    waitQueues: false,
    ...options,
    runtime: { runs: { get: (runId: string) => (frozen ? new Promise<RunItem | undefined>(() => undefined) : (runs as NonNullable<typeof runs>).get(runId)) } },
  });
  runs = pipeline.memory.store.runs;
  const deps = pipelineRouteDeps(pipeline, { syncWaitSeconds: 1 });
  return {
    pipeline,
    deps,
    freeze: () => void (frozen = true),
    async create(name, code, settings = {}) {
      const created = await createFunction(deps)(apiEvent("POST", "/functions", { name, code, ...settings }), lambdaContext("createFunction", "req"));
      expect([created.statusCode, json(created).status]).toEqual([201, "active"]);
    },
    invoke: (name, body, headers) => invokePost(deps)(apiEvent("POST", `/functions/${name}`, body, { ref: name }, headers), lambdaContext("invokePost", "req")),
    run: (answer) => pipeline.memory.store.runs.get(String(answer.headers?.["x-run-id"] ?? json(answer).run_id ?? "")),
    close: () => pipeline.close(),
  };
}

async function functionIdOf(world: World, name: string): Promise<string> {
  return (await world.pipeline.memory.store.functions.getByName("acme", name))?.function_id ?? "";
}

describe("the AWS run pipeline", () => {
  let world: World;

  beforeAll(async () => {
    world = await startWorld();
    await world.create("sleeper", SLEEPER);
    await world.create("big", BIG);
    await world.create("hangs", HANGS, { timeout_seconds: 2 });
  }, 60_000);

  afterAll(async () => {
    await world?.close();
  });

  it("invokes the function's Lambda from the workflow with an event that holds no secret of the service", async () => {
    const answer = await world.invoke("sleeper", { ms: 10 });
    expect([answer.statusCode, json(answer)]).toEqual([200, { slept: 10 }]);
    const runId = String(answer.headers?.["x-run-id"]);
    const event = world.pipeline.lambda.events.at(-1) as Record<string, unknown>;
    // Capabilities for its own run only (upload forms for its outcome and its artifact slots), nothing of the service.
    expect(Object.keys(event).sort()).toEqual(["artifacts_url", "params", "recording", "run_id", "timeout_ms", "uploads"]);
    // Presigned requests carry a signature, never the key that signs them.
    expect(JSON.stringify(event)).not.toContain("SIGNING-SECRET-NEVER-SHOWN");
    expect(event).toMatchObject({ run_id: runId, params: { ms: 10 }, timeout_ms: 300_000 });
    // The outcome form names this run's outcome object, and only it.
    const uploads = event.uploads as RunUploads;
    expect(uploads.outcome.key).toBe(outcomeKey(runId));
    expect(uploads.outcome.signature).toMatch(/^[0-9a-f]{64}$/);
    expect(uploads.artifacts.signatures).toHaveLength(100);
    // The answer comes once the run's record is final; the execution ends when its recorder returns, just after.
    await world.pipeline.settled();
    expect(world.pipeline.stepFunctions.executions.get(runId)).toMatchObject({ status: "SUCCEEDED", trail: ["Invoke", "Record", "Retrying", "Recorded"] });
    // The deploy configured no async destination: nothing but the workflow hears how a run ended.
    const names = world.pipeline.lambda.sent.map((command: LambdaCommand) => command.constructor.name);
    expect(names).not.toContain("PutFunctionEventInvokeConfigCommand");
    const invocations = world.pipeline.lambda.sent.filter((command) => command.constructor.name === "InvokeCommand");
    expect(invocations.map((command) => (command.input as { InvocationType?: string }).InvocationType ?? "RequestResponse")).not.toContain("Event");
  }, 30_000);

  it("runs the Playwright driver and unchanged Playwright and Puppeteer scripts on the Lambda runner", async () => {
    await world.create(
      "scripts",
      `import { Session } from "browserfn/runtime";
import { chromium } from "playwright";
import puppeteer from "puppeteer";
export default async function run(html: string) {
  await using session = await Session.start({ driver: "playwright" });
  const page = await session.newPage();
  await page.setContent(html);
  const browser = await chromium.launch({ headless: false });
  const scripted = await browser.newPage();
  await scripted.setContent(html);
  const pptr = await puppeteer.launch({ executablePath: "/x" });
  const other = await pptr.newPage();
  await other.setContent(html);
  const titles = [await page.locator("title").textContent(), await scripted.title(), await other.title()];
  await browser.close();
  await pptr.close();
  return titles;
}`,
    );
    const answer = await world.invoke("scripts", { html: "<title>On Lambda</title>" });
    // A cold browser may outlast the sync window (202): the run's record says how it ended.
    expect([200, 202]).toContain(answer.statusCode);
    await world.pipeline.settled();
    const run = await world.run(answer);
    expect([run?.status, run?.error, run?.result_json]).toEqual(["succeeded", null, JSON.stringify(["On Lambda", "On Lambda", "On Lambda"])]);
  }, 60_000);

  it("answers within the window with the result (200), recorded and metered once", async () => {
    const answer = await world.invoke("sleeper", { ms: 50 });
    expect([answer.statusCode, json(answer)]).toEqual([200, { slept: 50 }]);
    const run = await world.run(answer);
    expect(run).toMatchObject({ status: "succeeded", result_json: '{"slept":50}' });
    expect(run?.peak_memory_mb).toBeGreaterThan(20);
    await world.pipeline.settled();
    const counters = await world.pipeline.memory.store.meters.functionCounters(await functionIdOf(world, "sleeper"));
    expect(counters.invocations).toBe(2);
  }, 30_000);

  it("records a 1 MB result through the outcome bucket: it is the answer, whole (a destination event would have dropped it)", async () => {
    const answer = await world.invoke("big", { n: 1_000_000 });
    expect(answer.statusCode).toBe(200);
    expect(answer.body).toBe(JSON.stringify("x".repeat(1_000_000)));
    const run = await world.run(answer);
    expect(run).toMatchObject({ status: "succeeded", logs: "LOG making 1000000\n" });
    expect(world.pipeline.s3.requests).toContain(`POST ${outcomeKey(run?.run_id ?? "")}`);
    // Read, then deleted with the rest of the run's uploads once the run was recorded.
    expect(world.pipeline.s3.objects.has(`bfn-run-bucket/${outcomeKey(run?.run_id ?? "")}`)).toBe(false);
    expect(await world.pipeline.memory.store.limits.current("acme", new Date())).toMatchObject({ inFlight: 0 });
  }, 60_000);

  it("fails a 7 MB result with result_too_large (500), never a silent loss", async () => {
    const answer = await world.invoke("big", { n: 7_000_000 });
    expect([answer.statusCode, (json(answer).error as { code: string }).code]).toEqual([500, "result_too_large"]);
    expect(await world.run(answer)).toMatchObject({ status: "failed", error: { code: "result_too_large" }, logs: "LOG making 7000000\n" });
  }, 60_000);

  it("times a hanging run out at its timeout, keeping its logs", async () => {
    const answer = await world.invoke("hangs", {});
    expect(answer.statusCode).toBe(202); // the test's sync window is 1 s, the function's timeout 2 s
    await world.pipeline.settled();
    const run = await world.run(answer);
    expect(run).toMatchObject({ status: "timed_out", error: { code: "function_timeout" }, logs: "LOG started\n" });
  }, 60_000);

  it("ends a run of a function deleted meanwhile as failed, with its lease given back", async () => {
    await world.create("doomed", SLEEPER);
    const fn = await world.pipeline.memory.store.functions.getByName("acme", "doomed");
    await world.pipeline.runtime.remove(fn as NonNullable<typeof fn>); // its Lambda is gone; the record not yet
    const answer = await world.invoke("doomed", { ms: 1 });
    expect(answer.statusCode).toBe(500);
    expect(await world.run(answer)).toMatchObject({ status: "failed", error: { code: "function_crashed", message: expect.stringMatching(/not deployed/) } });
    await world.pipeline.settled();
    expect(await world.pipeline.memory.store.limits.current("acme", new Date())).toMatchObject({ inFlight: 0 });
    await deleteFunction(world.deps)(apiEvent("DELETE", "/functions/doomed", undefined, { ref: "doomed" }), lambdaContext("deleteFunction", "req"));
  }, 30_000);

  it("retries a failed async run on AWS as its function's retries say (one execution per attempt); a sync call gets one attempt", async () => {
    await world.create("retrying", 'export default async () => { throw new Error("fails"); };', { retries: { max_attempts: 2, backoff_seconds: 1 } });
    const accepted = await world.invoke("retrying", {}, { prefer: "respond-async" });
    expect(accepted.statusCode).toBe(202);
    await world.pipeline.settled();
    const runId = String(json(accepted).run_id);
    expect(await world.run(accepted)).toMatchObject({ status: "failed", attempt: 2, max_attempts: 2, attempts: [{ attempt: 1, status: "failed" }], error: { code: "function_error" } });
    expect([world.pipeline.stepFunctions.executions.has(runId), world.pipeline.stepFunctions.executions.has(`${runId}-attempt-2`)]).toEqual([true, true]);
    const sync = await world.invoke("retrying", {});
    expect(sync.statusCode).toBe(500);
    await world.pipeline.settled();
    expect(await world.run(sync)).toMatchObject({ status: "failed", attempt: 1, max_attempts: 1 });
  }, 30_000);

  it("answers 202 after the window, and the run still ends succeeded with its result once the handler is frozen", async () => {
    const answer = await world.invoke("sleeper", { ms: 2500 });
    world.freeze();
    expect([answer.statusCode, answer.body]).toEqual([202, expect.any(String)]);
    const runId = json(answer).run_id as string;
    expect(await world.pipeline.memory.store.runs.get(runId)).toMatchObject({ status: "running", finished_at: null });
    await world.pipeline.settled(); // the workflow invokes the Lambda, then the recorder
    const run = await world.pipeline.memory.store.runs.get(runId);
    expect(run).toMatchObject({ status: "succeeded", result_json: '{"slept":2500}', error: null });
    expect(run?.duration_ms).toBeGreaterThanOrEqual(2500);
    expect(await world.pipeline.memory.store.limits.current("acme", new Date())).toMatchObject({ inFlight: 0 });
  }, 30_000);
});

describe("the AWS run pipeline when recording fails", () => {
  it("retries a failing recorder, and the run is recorded once it answers", async () => {
    let failures = 0;
    const flaky = (real: ServiceLambda): ServiceLambda => async (payload) => {
      if (failures++ < 2) throw Object.assign(new Error("ProvisionedThroughputExceededException"), { name: "ProvisionedThroughputExceededException" });
      return real(payload);
    };
    const world = await startWorld({ recorder: flaky });
    try {
      await world.create("sleeper", SLEEPER);
      const answer = await world.invoke("sleeper", { ms: 5 });
      expect([answer.statusCode, json(answer)]).toEqual([200, { slept: 5 }]);
      const runId = String(answer.headers?.["x-run-id"]);
      await world.pipeline.settled();
      expect(world.pipeline.stepFunctions.executions.get(runId)?.trail).toEqual(["Invoke", "Record", "Record (retry)", "Record (retry)", "Retrying", "Recorded"]);
    } finally {
      await world.close();
    }
  }, 60_000);

  it("dead-letters a run its recorder never records, and the sweeper ends it at once: no run stays running", async () => {
    const broken = (): ServiceLambda => async () => {
      throw Object.assign(new Error("the table is gone"), { name: "ResourceNotFoundException" });
    };
    const world = await startWorld({ recorder: broken });
    try {
      await world.create("sleeper", SLEEPER);
      const answer = await world.invoke("sleeper", { ms: 5 });
      await world.pipeline.settled();
      // The execution's failure reaches the sweeper at once (EventBridge), within the sync window.
      expect([answer.statusCode, (json(answer).error as { code: string }).code]).toEqual([500, "internal_error"]);
      const runId = String(answer.headers?.["x-run-id"] ?? (json(answer).error as { details: { run_id: string } }).details.run_id);
      expect(world.pipeline.stepFunctions.executions.get(runId)).toMatchObject({ status: "FAILED", error: "RunNotRecorded" });
      expect(world.pipeline.stepFunctions.messages).toEqual([
        { queueUrl: DEAD_LETTER_URL, body: { run_id: runId, failure: { Error: "ResourceNotFoundException", Cause: expect.stringContaining("the table is gone") } } },
      ]);
      const run = await world.pipeline.memory.store.runs.get(runId);
      expect(run).toMatchObject({ status: "failed", error: { code: "internal_error", message: expect.stringMatching(/could not record/) } });
      expect(await world.pipeline.memory.store.limits.current("acme", new Date())).toMatchObject({ inFlight: 0 });
      expect((await world.pipeline.memory.store.meters.functionCounters(run?.function_id ?? "")).invocations).toBe(1);
    } finally {
      await world.close();
    }
  }, 60_000);

  it("ends a run whose answer is too big for the workflow (States.DataLimitExceeded, which no Catch takes) as result_too_large", async () => {
    const world = await startWorld();
    try {
      await world.create("sleeper", SLEEPER);
      // A runner user code has tampered with: it answers 300 KB inline instead of uploading.
      const send = world.pipeline.lambda.send.bind(world.pipeline.lambda);
      world.pipeline.lambda.send = async (command: LambdaCommand) => {
        const input = command.input as { FunctionName?: string };
        if (command.constructor.name === "InvokeCommand" && input.FunctionName?.startsWith("bfn-fn_")) {
          const answer = { status: "succeeded", result_json: JSON.stringify("y".repeat(300_000)), logs: "", browser_ms: 0 };
          return { StatusCode: 200, Payload: new TextEncoder().encode(JSON.stringify(answer)) };
        }
        return send(command);
      };
      const answer = await world.invoke("sleeper", { ms: 1 });
      world.freeze();
      await world.pipeline.settled();
      const runId = String(answer.headers?.["x-run-id"] ?? json(answer).run_id);
      expect(world.pipeline.stepFunctions.executions.get(runId)).toMatchObject({ status: "FAILED", error: "States.DataLimitExceeded" });
      expect(await world.pipeline.memory.store.runs.get(runId)).toMatchObject({ status: "failed", error: { code: "result_too_large" } });
      expect(await world.pipeline.memory.store.limits.current("acme", new Date())).toMatchObject({ inFlight: 0 });
    } finally {
      await world.close();
    }
  }, 60_000);

  it("sweeps a run left active past its deadline (its workflow never started or never ended)", async () => {
    const later = { now: () => new Date(Date.now() + 3600_000) };
    const world = await startWorld({ sweepClock: later });
    try {
      await world.create("sleeper", SLEEPER);
      const fn = await world.pipeline.memory.store.functions.getByName("acme", "sleeper");
      const store = world.pipeline.memory.store;
      // A run admitted and marked running whose workflow was lost (say, its start timed out).
      const queuedAt = new Date(Date.now() - 1000).toISOString();
      const admission = await store.limits.admit("acme", "run_lost", { concurrency: 10, invocationsPerMonth: 1000 }, Date.now() + 3600_000, new Date());
      expect(admission).toMatchObject({ admitted: true });
      const lost = { ...newRun(fn as NonNullable<typeof fn>, { version: 1, trigger: "http", params: {}, queuedAt }), run_id: "run_lost", status: "running" as const, started_at: queuedAt };
      await store.runs.put(lost);
      const recent = { ...lost, run_id: "run_recent", deadline_at: new Date(Date.now() + 7200_000).toISOString() };
      await store.runs.put(recent);
      expect(await world.pipeline.sweep()).toEqual({ settled: 1 });
      expect(await store.runs.get("run_lost")).toMatchObject({ status: "failed", error: { code: "function_crashed", message: expect.stringMatching(/deadline/) } });
      expect(await store.runs.get("run_recent")).toMatchObject({ status: "running" });
      expect(await store.limits.holds("acme", "run_lost")).toBe(false);
      expect(await world.pipeline.sweep()).toEqual({ settled: 0 }); // it left the index of active runs
    } finally {
      await world.close();
    }
  }, 60_000);
});

describe("a settings change racing a newer version's deploy", () => {
  it("never points a version's alias at another version's code: the publish over changed code is refused", async () => {
    const world = await startWorld();
    try {
      await world.create("racy", SLEEPER);
      const store = world.pipeline.memory.store;
      const fn = (await store.functions.getByName("acme", "racy"))!;
      const name = `bfn-${fn.function_id}`;
      const v1Code = await world.pipeline.lambda.send(new GetFunctionConfigurationCommand({ FunctionName: name, Qualifier: "v1" }));
      // Version 2's deploy has put its code in $LATEST, and has not published yet.
      const v2 = { ...(await store.versions.get(fn.function_id, 1))!, version: 2, js: "exports.default = async () => 2;" };
      await world.pipeline.lambda.send(new UpdateFunctionCodeCommand({ FunctionName: name, ZipFile: functionZip(v2).zip }));
      await expect(world.pipeline.runtime.configure!({ ...fn, memory_mb: 2048 })).rejects.toThrow(/CodeSha256/);
      const after = await world.pipeline.lambda.send(new GetFunctionConfigurationCommand({ FunctionName: name, Qualifier: "v1" }));
      expect((after as { CodeSha256: string }).CodeSha256).toBe((v1Code as { CodeSha256: string }).CodeSha256);
    } finally {
      await world.close();
    }
  }, 30_000);
});

describe("a deploy job Lambda gave up on", () => {
  it("leaves its function failed, saying to send the code again, unless a newer version took over", async () => {
    const world = await startWorld();
    try {
      await world.create("stuck", SLEEPER);
      const store = world.pipeline.memory.store;
      const fn = await store.functions.getByName("acme", "stuck");
      await store.functions.setStatus(fn!, "deploying", null);
      const job = { kind: "deploy", account_id: "acme", function_id: fn!.function_id, name: "stuck", version: 1, deploy_id: fn!.deploy_id };
      const failure = (payload: unknown) => ({
        version: "1.0",
        requestContext: { requestId: "r", functionArn: "arn:aws:lambda:eu-west-1:123456789012:function:bfn-deploy-job", condition: "RetriesExhausted", approximateInvokeCount: 3 },
        requestPayload: payload,
        responsePayload: { errorType: "TooManyRequestsException", errorMessage: "Rate exceeded" },
      });
      expect(await world.pipeline.sweeper(failure({ ...job, version: 2 }))).toEqual({ settled: 0 }); // not its latest version
      expect(await world.pipeline.sweeper(failure({ junk: true }))).toEqual({ settled: 0 });
      const { deploy_id: _mine, ...withoutId } = job;
      expect(await world.pipeline.sweeper(failure(withoutId))).toEqual({ settled: 0 }); // a job of a deploy before ids: not this one
      expect((await store.functions.getByName("acme", "stuck"))?.status).toBe("deploying");
      expect(await world.pipeline.sweeper(failure(job))).toEqual({ settled: 1 });
      expect(await store.functions.getByName("acme", "stuck")).toMatchObject({ status: "failed", status_reason: DEPLOY_JOB_FAILED_REASON });
    } finally {
      await world.close();
    }
  }, 30_000);
});

describe("the AWS run pipeline against a tampered runner and Lambda's throttles", () => {
  /** Answers the function's Invoke with `answer` (what a runner user code took over can say), counting the calls. */
  function tamper(world: World, answer: (call: number) => unknown): { calls: () => number } {
    let calls = 0;
    const send = world.pipeline.lambda.send.bind(world.pipeline.lambda);
    world.pipeline.lambda.send = async (command: LambdaCommand) => {
      const input = command.input as { FunctionName?: string };
      if (command.constructor.name === "InvokeCommand" && input.FunctionName?.startsWith("bfn-fn_")) {
        const reply = answer(++calls);
        if (reply instanceof Error) throw reply;
        if (reply === "run") return send(command);
        return reply;
      }
      return send(command);
    };
    return { calls: () => calls };
  }
  const throttle = () => Object.assign(new Error("Rate Exceeded."), { name: "TooManyRequestsException" });
  const functionError = (errorType: string) => ({
    StatusCode: 200,
    FunctionError: "Unhandled",
    Payload: new TextEncoder().encode(JSON.stringify({ errorType, errorMessage: "spoofed", trace: [] })),
  });

  let world: World;
  beforeEach(async () => {
    world = await startWorld();
    await world.create("sleeper", SLEEPER);
  }, 60_000);
  afterEach(async () => {
    await world?.close();
  });

  it("tries a throttled Invoke again (Lambda's own throttle: the function never ran) and records the run once it runs", async () => {
    const invoked = tamper(world, (call) => (call <= 2 ? throttle() : "run"));
    const answer = await world.invoke("sleeper", { ms: 1 });
    expect([answer.statusCode, json(answer)]).toEqual([200, { slept: 1 }]);
    expect(invoked.calls()).toBe(3);
    const runId = String(answer.headers?.["x-run-id"]);
    await world.pipeline.settled();
    expect(world.pipeline.stepFunctions.executions.get(runId)?.trail).toEqual([
      "Invoke", "Throttled", "CountThrottle", "WaitThrottle", "Invoke", "Throttled", "CountThrottle", "WaitThrottle", "Invoke", "Record", "Retrying", "Recorded",
    ]);
  }, 30_000);

  it("gives up after THROTTLE_ATTEMPTS: the run fails with concurrency_limit_exceeded and is metered as not run", async () => {
    const invoked = tamper(world, () => throttle());
    const answer = await world.invoke("sleeper", { ms: 1 });
    await world.pipeline.settled();
    expect(invoked.calls()).toBe(THROTTLE_ATTEMPTS);
    const run = await world.run(answer);
    expect(run).toMatchObject({ status: "failed", error: { code: "concurrency_limit_exceeded" }, duration_ms: 0 });
  }, 30_000);

  it("lets a scheduled firing throttled past THROTTLE_ATTEMPTS wait for Lambda (its workflow invokes it again) instead of failing", async () => {
    await world.create("nightly", SLEEPER, { schedule: "0 3 * * *", schedule_params: { ms: 1 } });
    const functionId = await functionIdOf(world, "nightly");
    const invoked = tamper(world, (call) => (call <= THROTTLE_ATTEMPTS + 2 ? throttle() : "run"));
    const fired = await makeScheduledRunHandler(world.deps)({ function_id: functionId, scheduled_for: "2026-11-28T03:00:00.000Z" });
    expect(fired.outcome).toBe("started");
    await world.pipeline.settled();
    expect(invoked.calls()).toBe(THROTTLE_ATTEMPTS + 3);
    const run = await world.pipeline.memory.store.runs.get(String(fired.run_id));
    expect(run).toMatchObject({ trigger: "schedule", status: "succeeded", result_json: JSON.stringify({ slept: 1 }), error: null });
    const trail = world.pipeline.stepFunctions.executions.get(String(fired.run_id))?.trail ?? [];
    // The quick throttle retries ran out once; the run waited (its lease kept) and its next round ran it.
    expect(trail.filter((state) => state === "Record")).toHaveLength(2);
    expect(trail.slice(trail.indexOf("Record"), trail.indexOf("Record") + 5)).toEqual(["Record", "Retrying", "WaitLambda", "Reinvoke", "Invoke"]);
    expect(trail.slice(-3)).toEqual(["Record", "Retrying", "Recorded"]);
    expect(await world.pipeline.memory.store.limits.current("acme", new Date())).toMatchObject({ inFlight: 0 });
  }, 30_000);

  it("gives the Idempotency-Key of a run Lambda throttled until it gave up back: a retry under it runs", async () => {
    let throttling = true;
    tamper(world, () => (throttling ? throttle() : "run"));
    const headers = { "idempotency-key": "throttled-1" };
    const refused = await world.invoke("sleeper", { ms: 1 }, headers);
    expect([refused.statusCode, (json(refused).error as { code: string }).code]).toEqual([429, "concurrency_limit_exceeded"]);
    throttling = false;
    const retry = await world.invoke("sleeper", { ms: 1 }, headers);
    expect([retry.statusCode, json(retry), retry.headers?.["idempotent-replayed"]]).toEqual([200, { slept: 1 }, undefined]);
    expect(retry.headers?.["x-run-id"]).not.toBe(refused.headers?.["x-run-id"]);
  }, 30_000);

  it("lets a duplicate that finds the key's run throttled (never started) run instead of replaying its 429", async () => {
    let throttling = true;
    tamper(world, () => (throttling ? throttle() : "run"));
    const headers = { "idempotency-key": "throttled-2" };
    // Answered 202 at once: nobody in the first request sees the run's end.
    const accepted = await world.invoke("sleeper", { ms: 1 }, { ...headers, prefer: "respond-async" });
    expect(accepted.statusCode).toBe(202);
    await world.pipeline.settled();
    expect(await world.run(accepted)).toMatchObject({ status: "failed", error: { code: "concurrency_limit_exceeded" } });
    throttling = false;
    const duplicate = await world.invoke("sleeper", { ms: 1 }, headers);
    expect([duplicate.statusCode, json(duplicate), duplicate.headers?.["idempotent-replayed"]]).toEqual([200, { slept: 1 }, undefined]);
    const again = await world.invoke("sleeper", { ms: 1 }, headers);
    expect([again.statusCode, again.headers?.["x-run-id"], again.headers?.["idempotent-replayed"]]).toEqual([200, duplicate.headers?.["x-run-id"], "true"]);
  }, 30_000);

  it("never runs an automation again for an error it named like a throttle (it ran once, and crashed)", async () => {
    const invoked = tamper(world, () => functionError("Lambda.TooManyRequestsException"));
    const answer = await world.invoke("sleeper", { ms: 1 });
    await world.pipeline.settled();
    expect(invoked.calls()).toBe(1);
    expect(await world.run(answer)).toMatchObject({ status: "failed", error: { code: "function_crashed", message: expect.stringContaining("spoofed") } });
  }, 30_000);

  it("records a claimed upload that is not there as a crash, at once: no recorder failure, no dead letter", async () => {
    tamper(world, () => ({ StatusCode: 200, Payload: new TextEncoder().encode(JSON.stringify({ outcome_uploaded: true, bytes: 0 })) }));
    const answer = await world.invoke("sleeper", { ms: 1 });
    await world.pipeline.settled();
    const runId = String(answer.headers?.["x-run-id"] ?? json(answer).run_id);
    expect(await world.run(answer)).toMatchObject({ status: "failed", error: { code: "function_crashed", message: expect.stringMatching(/uploaded its outcome, but there is none/) } });
    expect(world.pipeline.stepFunctions.executions.get(runId)).toMatchObject({ status: "SUCCEEDED", trail: ["Invoke", "Record", "Retrying", "Recorded"] });
    expect(world.pipeline.stepFunctions.messages).toEqual([]);
  }, 30_000);
});

describe("artifacts on AWS", () => {
  it("uploads what a run saves through its presigned POST, records what S3 holds, and downloads through a presigned redirect", async () => {
    const world = await startWorld();
    try {
      world.deps.artifactContent = {
        open: async (item) => ({ redirect: await world.pipeline.outcomes.artifactDownloadUrl(item.run_id, item.name, item.content_type) }),
      };
      await world.create(
        "saver",
        `import { artifacts } from "browserfn/runtime";
        export default async () => {
          const saved = await artifacts.save("report.csv", "a,b\\n1,2\\n");
          return saved;
        }`,
      );
      const answer = await world.invoke("saver", {});
      expect(answer.statusCode).toBe(200);
      const runId = String(answer.headers?.["x-run-id"]);
      expect(json(answer)).toEqual({ name: "report.csv", url: `https://api.example.com/runs/${runId}/artifacts/report.csv`, bytes: 8 });
      await world.pipeline.settled();
      const items = await world.pipeline.memory.store.artifacts.list(runId);
      expect(items).toEqual([expect.objectContaining({ name: "report.csv", bytes: 8, content_type: "text/csv; charset=utf-8", account_id: "acme" })]);
      // Uploaded to its slot, copied to its name by the recorder, and every upload of the run deleted after, in one call.
      // (Besides the live view's looks at its watch marker: awsLiveAndRecordings.test.)
      const s3Calls = world.pipeline.s3.requests.filter((request) => request.includes(runId) && !request.includes(`/live/${runId}/`));
      expect(s3Calls).toEqual([
        `POST outcomes/${runId}/artifact-0`,
        `HEAD /bfn-run-bucket/outcomes/${runId}/artifact-0`,
        `PUT /bfn-run-bucket/artifacts/${runId}/report.csv`,
      ]);
      expect(world.pipeline.s3.deletes.at(-1)).toEqual([outcomeKey(runId), ...Array.from({ length: 100 }, (_, slot) => `outcomes/${runId}/artifact-${slot}`)]);
      expect([...world.pipeline.s3.objects.keys()].filter((key) => key.includes(runId))).toEqual([`bfn-run-bucket/artifacts/${runId}/report.csv`]);
      // Each slot's form writes its own key only: another run's, another slot's, the outcome's, or the artifacts' are refused.
      const { uploads } = world.pipeline.lambda.events.at(-1) as { uploads: RunUploads };
      const forge = (slot: number, key: string) => {
        const form = new FormData();
        for (const [field, value] of Object.entries(uploads.fields)) form.append(field, value);
        form.append("Policy", slotPolicy(uploads.artifacts.policy_template, slot));
        form.append("X-Amz-Signature", uploads.artifacts.signatures[slot] ?? "");
        form.append("key", key);
        form.append("Content-Type", "text/plain");
        form.append("file", new Blob(["forged"]), "x.txt");
        return fetch(uploads.url, { method: "POST", body: form });
      };
      for (const key of [`outcomes/run_someone_else/artifact-0`, `outcomes/${runId}/artifact-1`, outcomeKey(runId), `artifacts/${runId}/x.txt`]) expect((await forge(0, key)).status).toBe(403);
      // A policy is only as good as its signature: slot 100 does not exist, and slot 1's policy does not pass with slot 0's signature.
      const mismatched = new FormData();
      for (const [field, value] of Object.entries(uploads.fields)) mismatched.append(field, value);
      mismatched.append("Policy", slotPolicy(uploads.artifacts.policy_template, 100));
      mismatched.append("X-Amz-Signature", uploads.artifacts.signatures[0] ?? "");
      mismatched.append("key", `outcomes/${runId}/artifact-100`);
      mismatched.append("Content-Type", "text/plain");
      mismatched.append("file", new Blob(["forged"]), "x.txt");
      expect((await fetch(uploads.url, { method: "POST", body: mismatched })).status).toBe(403);
      // The API answers 302 to a short-lived URL; the bytes come from S3.
      const download = await getArtifact(world.deps)(apiEvent("GET", `/runs/${runId}/artifacts/report.csv`, undefined, { run_id: runId, name: "report.csv" }), lambdaContext("getArtifact", "req"));
      expect(download.statusCode).toBe(302);
      const fetched = await fetch(String(download.headers?.location));
      expect([fetched.status, await fetched.text(), fetched.headers.get("content-disposition")]).toEqual([200, "a,b\n1,2\n", 'attachment; filename="report.csv"']);
      const usage = await world.pipeline.memory.store.meters.usage("acme", new Date().toISOString().slice(0, 7));
      expect(usage.total.artifact_bytes).toBe(8);
      // The dashboard may fetch what the redirect points at: the bucket's origin is in its CSP.
      world.deps.config.artifactOrigins = ["https://bfn-run-bucket.s3.eu-west-1.amazonaws.com"];
      const page = await dashboard(world.deps)(apiEvent("GET", "/", undefined), lambdaContext("dashboard", "req"));
      expect(String(page.headers?.["content-security-policy"])).toContain("connect-src 'self' https://bfn-run-bucket.s3.eu-west-1.amazonaws.com");
    } finally {
      await world.close();
    }
  }, 60_000);

  it("keeps the failure evidence of a run that throws with a page open", async () => {
    const world = await startWorld();
    try {
      await world.create(
        "breaks",
        `import { Session } from "browserfn/runtime";
        export default async () => {
          await using session = await Session.start();
          const page = await session.newPage();
          await page.setContent("<title>broken page</title><h1>Oops</h1>");
          throw new Error("no button");
        }`,
      );
      const answer = await world.invoke("breaks", {});
      await world.pipeline.settled(); // the sync window (1 s here) may pass while the browser starts
      const runId = String(json(answer).run_id ?? (json(answer).error as { details: { run_id: string } }).details.run_id);
      expect(await world.pipeline.memory.store.runs.get(runId)).toMatchObject({ status: "failed", error: { code: "function_error" } });
      const items = await world.pipeline.memory.store.artifacts.list(runId);
      expect(items.map((item) => [item.name, item.content_type])).toEqual([
        ["failure-1.html", "text/html; charset=utf-8"],
        ["failure-1.png", "image/png"],
        // The page's recording, which a failed run keeps under the default `recording: "failures"`.
        ["recording-1.json", "application/json"],
      ]);
      const run = await world.pipeline.memory.store.runs.get(runId);
      expect(run?.logs).toMatch(/page 1 was at about:blank: kept failure-1\.png, failure-1\.html/);
    } finally {
      await world.close();
    }
  }, 60_000);
});

describe("function secrets on AWS", () => {
  const PASSWORD = "aws-Pa$$w0rd-never-in-history";
  const USES_SECRET = `import { secrets } from "browserfn/runtime";
export default async () => { const password = secrets.get("PASSWORD"); console.log("using", password); return { password, length: password?.length ?? 0 }; };`;

  it("seals each secret for its function's own Lambda, which opens it itself: no value in the event, the workflow's history or the record", async () => {
    const world = await startWorld();
    try {
      await world.create("login", USES_SECRET);
      const functionId = await functionIdOf(world, "login");
      const put = await putSecret(world.deps)(
        apiEvent("PUT", "/functions/login/secrets/PASSWORD", { value: PASSWORD }, { ref: "login", name: "PASSWORD" }),
        lambdaContext("putSecret", "req"),
      );
      expect(put.statusCode).toBe(204);
      const runner = runnerSession("AROAEXAMPLEEXECUTION", `bfn-${functionId}`);
      const context = { function_id: functionId, secret: "PASSWORD", runner };
      const { kms } = world.pipeline;
      expect(kms.calls).toEqual([{ caller: "service", command: "Encrypt", keyId: kms.keyArn, context }]);

      const answer = await world.invoke("login", {});
      expect([answer.statusCode, json(answer)]).toEqual([200, { password: "[secret]", length: PASSWORD.length }]);
      // The function's Lambda opened the run's data key, as its own session: a context that names it (lambdas/secrets/runEnvelope).
      const dataKeyContext = { function_id: functionId, runner, purpose: "run_data_key" };
      expect(kms.calls.filter((call) => call.caller === runner)).toEqual([{ caller: runner, command: "Decrypt", keyId: undefined, context: dataKeyContext }]);
      const runId = String(answer.headers?.["x-run-id"]);
      const event = world.pipeline.lambda.events.at(-1) as { secrets: { items: { name: string; sealed: string }[] } };
      // Each secret as stored too (what a runner from before the envelope opens).
      expect(event.secrets).toEqual({
        function_id: functionId,
        runner,
        items: [{ name: "PASSWORD", sealed: expect.any(String) }],
        envelope: { data_key: expect.any(String), items: [{ name: "PASSWORD", sealed: expect.any(String) }] },
      });
      const execution = world.pipeline.stepFunctions.executions.get(runId);
      const run = await world.run(answer);
      for (const text of [JSON.stringify(event), JSON.stringify(execution), JSON.stringify(run)]) expect(text).not.toContain(PASSWORD);
      expect(run).toMatchObject({ status: "succeeded", logs: "LOG using [secret]\n" });

      // Another function's Lambda cannot open it: not as itself (the grant's condition), nor by naming the owner's session.
      const sealed = event.secrets.items[0]?.sealed ?? "";
      const thief = kms.client(runnerSession("AROAEXAMPLEEXECUTION", "bfn-fn_00000000000000000000000000"));
      const decrypt = (encryptionContext: Record<string, string>) => thief.send(new DecryptCommand({ CiphertextBlob: Buffer.from(sealed, "base64"), EncryptionContext: encryptionContext }));
      await expect(decrypt(context)).rejects.toMatchObject({ name: "AccessDeniedException" });
      await expect(decrypt({ ...context, runner: runnerSession("AROAEXAMPLEEXECUTION", "bfn-fn_00000000000000000000000000") })).rejects.toMatchObject({
        name: "InvalidCiphertextException",
      });
    } finally {
      await world.close();
    }
  }, 60_000);

  /** A function using two secrets, invoked `runs` times: the KMS calls each caller made, by command. */
  async function kmsCallsOfRuns(world: World, runs: number): Promise<{ service: Record<string, number>; runner: Record<string, number> }> {
    await world.create("login2", `import { secrets } from "browserfn/runtime";
export default async () => ({ length: (secrets.get("PASSWORD") ?? "").length + (secrets.get("USER") ?? "").length });`);
    for (const [name, value] of [["PASSWORD", PASSWORD], ["USER", "someone"]] as const) {
      const put = await putSecret(world.deps)(apiEvent("PUT", `/functions/login2/secrets/${name}`, { value }, { ref: "login2", name }), lambdaContext("putSecret", "req"));
      expect(put.statusCode).toBe(204);
    }
    const runner = runnerSession("AROAEXAMPLEEXECUTION", `bfn-${await functionIdOf(world, "login2")}`);
    const { kms } = world.pipeline;
    const before = kms.calls.length;
    for (let run = 0; run < runs; run++) {
      const answer = await world.invoke("login2", {});
      expect([answer.statusCode, json(answer)]).toEqual([200, { length: PASSWORD.length + "someone".length }]);
    }
    const count = (caller: string) => {
      const counts: Record<string, number> = {};
      for (const call of kms.calls.slice(before)) if (call.caller === caller) counts[call.command] = (counts[call.command] ?? 0) + 1;
      return counts;
    };
    return { service: count("service"), runner: count(runner) };
  }

  it("opens a run's secrets with one KMS Decrypt per run in the function's Lambda, and the service keeps its data key (the KMS cost model)", async () => {
    const world = await startWorld();
    try {
      // Three runs of a function with two secrets. The service opens each secret once (kmsSecretBox.ts keeps opened values
      // 5 minutes) and makes one data key (runDataKeys.ts keeps it 5 minutes); the function's Lambda makes one Decrypt per
      // run, not one per secret per run (6).
      expect(await kmsCallsOfRuns(world, 3)).toEqual({ service: { Decrypt: 2, GenerateDataKey: 1 }, runner: { Decrypt: 3 } });
    } finally {
      await world.close();
    }
  }, 60_000);

  it("still opens a run sent without the envelope, secret by secret (a service from before it)", async () => {
    const world = await startWorld({ runDataKeys: false });
    try {
      expect(await kmsCallsOfRuns(world, 2)).toEqual({ service: { Decrypt: 2 }, runner: { Decrypt: 4 } });
    } finally {
      await world.close();
    }
  }, 60_000);

  it("the recorder redacts a value the runner's answer still held", async () => {
    const world = await startWorld({
      // A runner that did not redact (user code can reach the answer's channel): the recorder does.
      recorder: (real) => async (payload) => {
        const input = payload as { ended?: { answer?: { result_json?: string; logs?: string } } };
        const answer = input.ended?.answer;
        if (answer?.result_json) answer.result_json = JSON.stringify({ leaked: PASSWORD });
        if (answer) answer.logs = `raw ${PASSWORD}\n`;
        return real(payload);
      },
    });
    try {
      await world.create("leaky", USES_SECRET);
      await putSecret(world.deps)(apiEvent("PUT", "/functions/leaky/secrets/PASSWORD", { value: PASSWORD }, { ref: "leaky", name: "PASSWORD" }), lambdaContext("putSecret", "req"));
      const answer = await world.invoke("leaky", {});
      expect([answer.statusCode, json(answer)]).toEqual([200, { leaked: "[secret]" }]);
      expect(await world.run(answer)).toMatchObject({ logs: "raw [secret]\n" });
    } finally {
      await world.close();
    }
  }, 60_000);
});
