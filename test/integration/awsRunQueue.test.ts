import { principalContext } from "../../lambdas/aws/authorizerContext";
import { awsQueueDispatch } from "../../lambdas/aws/awsDispatch";
import { lazyRoute } from "../../lambdas/aws/lazyHandlers";
import type { Deps } from "../../lambdas/deps";
import { createFunction } from "../../lambdas/handlers/createFunction";
import { deleteFunction } from "../../lambdas/handlers/deleteFunction";
import { invokePost } from "../../lambdas/handlers/invokePost";
import type { HttpResult } from "../../lambdas/http/response";
import { lambdaContext } from "../../lambdas/local/lambdaContext";
import { RunQueueState } from "../../lambdas/queue/queueState";
import { INVOKE_MARGIN_SECONDS } from "../../lambdas/runtime/aws/runWorkflow";
import type { RunItem } from "../../lambdas/runs/types";
import { apiGatewayEvent } from "../helpers/apiGatewayEvent";
import { type AwsPipeline, type AwsPipelineOptions, pipelineRouteDeps, type StartCall, STATE_MACHINE_ARN, startAwsPipeline } from "../helpers/awsPipeline";

// The run queue on AWS, as the stack wires it: the route Lambda dispatches after an enqueue
// (and answers without waiting for a queued run), the recorder after each release, the sweeper
// as recovery. The real runner and workflow behind in-process Lambda, Step Functions and S3;
// dynalite as DynamoDB; every StartExecution call is asserted.

const SLEEPER = "export default async (ms: number) => { await new Promise((resolve) => setTimeout(resolve, ms)); return { slept: ms }; };";
const ACCOUNT = "acme";
// The free plan: two runs at a time.
const principal = principalContext({ account_id: ACCOUNT, plan: "free", admin: false, key_id: "key_1" });
const json = (result: HttpResult) => JSON.parse(result.body ?? "null") as Record<string, unknown>;
const ASYNC = { prefer: "respond-async" };

interface QueueWorld {
  pipeline: AwsPipeline;
  deps: Deps;
  /** Reads of each run's record by the route Lambda's runtime (its watch of a run's end). */
  runtimeReads: Map<string, number>;
  create(name: string, code: string): Promise<string>;
  invoke(name: string, body: unknown, headers?: Record<string, string>): Promise<HttpResult>;
  run(runId: string): Promise<RunItem | undefined>;
  /** StartExecution calls so far, as [who, run id]. */
  starts(): [string, string][];
  close(): Promise<void>;
}

async function startQueueWorld(options: AwsPipelineOptions = {}): Promise<QueueWorld> {
  const runtimeReads = new Map<string, number>();
  const late: { store?: AwsPipeline["memory"]["store"] } = {};
  const pipeline = await startAwsPipeline({
    queue: true,
    ...options,
    runtime: {
      runs: {
        get: (runId: string) => {
          runtimeReads.set(runId, (runtimeReads.get(runId) ?? 0) + 1);
          return (late.store as AwsPipeline["memory"]["store"]).runs.get(runId);
        },
      },
    },
  });
  late.store = pipeline.memory.store;
  const deps = pipelineRouteDeps(pipeline, { syncWaitSeconds: 1, queue: new RunQueueState() });
  // Through the route Lambda's own wrapper: it awaits the queue's work before it answers.
  const invokeRoute = lazyRoute(invokePost, () => deps);
  return {
    pipeline,
    deps,
    runtimeReads,
    async create(name, code) {
      const created = await createFunction(deps)(apiGatewayEvent(principal, "POST", "/functions", { name, code }), lambdaContext("createFunction", "req"));
      expect([created.statusCode, json(created).status]).toEqual([201, "active"]);
      return String(json(created).function_id);
    },
    invoke: (name, body, headers = {}) =>
      invokeRoute(apiGatewayEvent(principal, "POST", `/functions/${name}`, body, { ref: name }, headers), lambdaContext("invokePost", "req")) as Promise<HttpResult>,
    run: (runId) => pipeline.memory.store.runs.get(runId),
    starts: () => pipeline.starts.map((call) => [call.by, String(call.input.name)]),
    close: () => pipeline.close(),
  };
}

const runIdOf = (answer: HttpResult) => String(answer.headers?.["x-run-id"] ?? json(answer).run_id ?? "");

describe("the run queue on AWS", () => {
  let world: QueueWorld;

  afterEach(async () => {
    await world?.close();
  });

  it("answers respond-async 202 queued at once behind a full plan, and the recorder's release starts the run exactly once", async () => {
    world = await startQueueWorld();
    const functionId = await world.create("sleeper", SLEEPER);
    const first = await world.invoke("sleeper", { ms: 1500 }, ASYNC);
    const second = await world.invoke("sleeper", { ms: 1500 }, ASYNC);
    expect([first.statusCode, second.statusCode]).toEqual([202, 202]);
    const queued = await world.invoke("sleeper", { ms: 1 }, ASYNC);
    const [a, b, c] = [runIdOf(first), runIdOf(second), runIdOf(queued)];
    // At once: both runs before it are still running when it is answered.
    expect([queued.statusCode, json(queued).status]).toEqual([202, "queued"]);
    expect([(await world.run(a))?.status, (await world.run(b))?.error, (await world.run(b))?.status]).toEqual(["running", null, "running"]);
    expect(await world.run(c)).toMatchObject({ status: "queued", queue_reason: "plan_concurrency" });
    expect(world.starts()).toEqual([
      ["route", a],
      ["route", b],
    ]);

    await world.pipeline.settled();
    // The first release (the recorder of a or b) started it; nobody else did.
    expect(world.starts()).toEqual([
      ["route", a],
      ["route", b],
      ["recorder", c],
    ]);
    const [routeCall, , recorderCall] = world.pipeline.starts as [StartCall, StartCall, StartCall];
    expect(recorderCall.command).toBe("StartExecutionCommand");
    expect(recorderCall.input.stateMachineArn).toBe(STATE_MACHINE_ARN);
    const routeInput = JSON.parse(String(routeCall.input.input)) as { event: { artifacts_url: string } };
    expect(JSON.parse(String(recorderCall.input.input))).toEqual({
      run_id: c,
      // Started by the recorder: nobody waits for it there.
      notify: null,
      function: `bfn-${functionId}:v1`,
      timeout_seconds: 300,
      invoke_timeout_seconds: 300 + INVOKE_MARGIN_SECONDS,
      event: {
        run_id: c,
        params: { ms: 1 },
        timeout_ms: 300_000,
        uploads: expect.objectContaining({ outcome: expect.objectContaining({ key: `outcomes/${c}/outcome.json` }) }),
        // The base URL the run was queued with.
        artifacts_url: routeInput.event.artifacts_url.replace(a, c),
        recording: "failures", // the default
      },
      throttles: 0,
      attempt: 1,
    });
    expect(await world.run(c)).toMatchObject({ status: "succeeded", result_json: JSON.stringify({ slept: 1 }) });
    expect((await world.pipeline.memory.store.meters.functionCounters(functionId)).invocations).toBe(3);
    const limits = await world.pipeline.memory.store.limits.read(ACCOUNT);
    expect([Object.keys(limits?.leases ?? {}), limits?.queued ?? 0]).toEqual([[], 0]);
    // The dispatcher never watched the run it started: no read of its record by a runtime.
    expect(world.runtimeReads.get(c) ?? 0).toBe(0);
  }, 60_000);

  it("answers a sync call past its window 202 queued, without polling for the queued run", async () => {
    world = await startQueueWorld();
    await world.create("sleeper", SLEEPER);
    const busy = [await world.invoke("sleeper", { ms: 2500 }, ASYNC), await world.invoke("sleeper", { ms: 2500 }, ASYNC)];
    const reads: string[] = [];
    const get = world.deps.store.runs.get.bind(world.deps.store.runs);
    world.deps.store.runs.get = (runId: string) => {
      reads.push(runId);
      return get(runId);
    };
    const answer = await world.invoke("sleeper", { ms: 1 });
    const runId = runIdOf(answer);
    expect([answer.statusCode, json(answer).status, json(answer).run_id]).toEqual([202, "queued", runId]);
    // One read of its record for the 202's status; none by the runtime (nothing watches it).
    expect(reads.filter((id) => id === runId)).toHaveLength(1);
    expect(world.runtimeReads.get(runId) ?? 0).toBe(0);
    expect(world.starts().map(([, id]) => id)).toEqual(busy.map(runIdOf));
    await world.pipeline.settled();
    expect(world.starts()).toEqual([...busy.map((a): [string, string] => ["route", runIdOf(a)]), ["recorder", runId]]);
    expect(await world.run(runId)).toMatchObject({ status: "succeeded", result_json: JSON.stringify({ slept: 1 }) });
  }, 60_000);

  it("starts a queued run from the sweeper when no release woke a dispatcher", async () => {
    // The recorder released the slots and stopped before it dispatched (it died, or timed out).
    world = await startQueueWorld({ recorderDispatches: false });
    await world.create("sleeper", SLEEPER);
    const busy = [await world.invoke("sleeper", { ms: 1500 }, ASYNC), await world.invoke("sleeper", { ms: 1500 }, ASYNC)];
    const queued = runIdOf(await world.invoke("sleeper", { ms: 1 }, ASYNC));
    await world.pipeline.settled();
    expect(await world.run(queued)).toMatchObject({ status: "queued" });
    expect(Object.keys((await world.pipeline.memory.store.limits.read(ACCOUNT))?.leases ?? {})).toEqual([]);
    expect(world.starts()).toHaveLength(2);

    expect(await world.pipeline.sweep()).toMatchObject({ settled: 0, queued_accounts: 1 });
    expect(world.starts()).toEqual([...busy.map((a): [string, string] => ["route", runIdOf(a)]), ["sweeper", queued]]);
    await world.pipeline.settled();
    expect(await world.run(queued)).toMatchObject({ status: "succeeded", result_json: JSON.stringify({ slept: 1 }) });
    // Nothing waits any more: the account left the sweep's list, and a sweep starts nothing.
    expect(await world.pipeline.sweep()).toEqual({ settled: 0 });
    expect(world.starts()).toHaveLength(3);
  }, 60_000);

  it("starts each queued run once, and never more than the plan's slots, with two dispatchers and the sweeper racing", async () => {
    world = await startQueueWorld({ recorderDispatches: false });
    await world.create("sleeper", SLEEPER);
    await world.invoke("sleeper", { ms: 2000 }, ASYNC);
    await world.invoke("sleeper", { ms: 2000 }, ASYNC);
    const queued: string[] = [];
    for (let n = 0; n < 3; n++) queued.push(runIdOf(await world.invoke("sleeper", { ms: 500 }, ASYNC)));
    await world.pipeline.settled();
    expect(world.starts()).toHaveLength(2);

    await Promise.all([awsQueueDispatch(world.pipeline.dispatcher("one"))(ACCOUNT), awsQueueDispatch(world.pipeline.dispatcher("two"))(ACCOUNT), world.pipeline.sweep()]);
    // Two free slots: the two oldest, each started once, by whichever dispatcher claimed it.
    const raced = world.starts().slice(2);
    expect(raced.map(([, id]) => id).sort()).toEqual(queued.slice(0, 2).sort());
    expect(raced.every(([by]) => ["one", "two", "sweeper"].includes(by))).toBe(true);
    expect(Object.keys((await world.pipeline.memory.store.limits.read(ACCOUNT))?.leases ?? {}).sort()).toEqual(queued.slice(0, 2).sort());
    expect(await world.run(String(queued[2]))).toMatchObject({ status: "queued" });

    await world.pipeline.settled();
    await Promise.all([awsQueueDispatch(world.pipeline.dispatcher("three"))(ACCOUNT), world.pipeline.sweep()]);
    await world.pipeline.settled();
    const started = world.starts().slice(2).map(([, id]) => id);
    expect(started.sort()).toEqual([...queued].sort());
    for (const runId of queued) expect(await world.run(runId)).toMatchObject({ status: "succeeded", result_json: JSON.stringify({ slept: 500 }) });
  }, 60_000);

  it("ends a queued run whose StartExecution stays throttled failed (concurrency_limit_exceeded), gives its lease back and starts the next", async () => {
    let throttled = "";
    const throttling = Object.assign(new Error("Rate exceeded"), { name: "ThrottlingException", $fault: "client", $metadata: { httpStatusCode: 400 } });
    world = await startQueueWorld({ refuseStart: (by, runId) => (by === "recorder" && runId === throttled ? throttling : undefined) });
    await world.create("sleeper", SLEEPER);
    const busy = [await world.invoke("sleeper", { ms: 1000 }, ASYNC), await world.invoke("sleeper", { ms: 1000 }, ASYNC)];
    throttled = runIdOf(await world.invoke("sleeper", { ms: 1 }, ASYNC));
    const next = runIdOf(await world.invoke("sleeper", { ms: 1 }, ASYNC));
    await world.pipeline.settled();
    expect(await world.run(throttled)).toMatchObject({ status: "failed", error: { code: "concurrency_limit_exceeded" } });
    // Its one attempt, then the next queued run in the slot it gave back.
    expect(world.starts()).toEqual([...busy.map((a): [string, string] => ["route", runIdOf(a)]), ["recorder", throttled], ["recorder", next]]);
    expect(await world.run(next)).toMatchObject({ status: "succeeded", result_json: JSON.stringify({ slept: 1 }) });
    const limits = await world.pipeline.memory.store.limits.read(ACCOUNT);
    expect([Object.keys(limits?.leases ?? {}), limits?.queued ?? 0]).toEqual([[], 0]);
  }, 60_000);

  it("ends a queued run whose function was deleted failed (function_not_found) when dispatched, never started, and frees its place", async () => {
    world = await startQueueWorld();
    await world.create("sleeper", SLEEPER);
    await world.create("doomed", SLEEPER);
    const busy = [await world.invoke("sleeper", { ms: 1000 }, ASYNC), await world.invoke("sleeper", { ms: 1000 }, ASYNC)];
    const doomed = runIdOf(await world.invoke("doomed", { ms: 1 }, ASYNC));
    const after = runIdOf(await world.invoke("sleeper", { ms: 1 }, ASYNC));
    const deleted = await deleteFunction(world.deps)(apiGatewayEvent(principal, "DELETE", "/functions/doomed", undefined, { ref: "doomed" }), lambdaContext("deleteFunction", "req"));
    expect(deleted.statusCode).toBe(204);
    await world.pipeline.settled();
    expect(await world.run(doomed)).toMatchObject({ status: "failed", error: { code: "function_not_found" } });
    // Its place went to the next queued run; it was never handed to the workflow.
    expect(world.starts()).toEqual([...busy.map((a): [string, string] => ["route", runIdOf(a)]), ["recorder", after]]);
    expect(await world.run(after)).toMatchObject({ status: "succeeded", error: null });
    const limits = await world.pipeline.memory.store.limits.read(ACCOUNT);
    expect([Object.keys(limits?.leases ?? {}), limits?.queued ?? 0]).toEqual([[], 0]);
  }, 60_000);
});
