/**
 * The runner rollout's trigger and job (issue #23, item 8): a stack update (the custom
 * resource's Update, its properties the new layer ARNs) starts the job asynchronously and
 * answers CloudFormation at once; the job moves every function on old layers, leaves current
 * ones, and goes on in a new invocation near its timeout. Real store (dynalite), Lambda faked
 * with its state, exact calls asserted.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { CreateAliasCommand, CreateFunctionCommand, GetFunctionConfigurationCommand, PublishVersionCommand, ResourceNotFoundException } from "@aws-sdk/client-lambda";
import type { CloudFormationCustomResourceUpdateEvent } from "aws-lambda";
import { DEPLOY_LOOK_MS, makeRolloutJob, ROLLOUT_MARGIN_MS, type RolloutEvent } from "../../lambdas/rollout/rolloutJob";
import { makeRolloutTrigger } from "../../lambdas/rollout/rolloutTrigger";
import type { LambdaSetup } from "../../lambdas/runtime/aws/deployLambda";
import type { LambdaCommand, LambdaSend } from "../../lambdas/runtime/aws/lambdaClient";
import { InProcessLambda } from "../helpers/inProcessLambda";
import { startMemoryStore, type MemoryStore } from "../helpers/memoryStore";
import { functionItem } from "../helpers/records";

const ROLE = "arn:aws:iam::123456789012:role/browserfn-function";
const OLD = ["arn:aws:lambda:eu-central-1:123456789012:layer:bfn-chromium:3", "arn:aws:lambda:eu-central-1:123456789012:layer:bfn-runtime:7"];
const NEW = ["arn:aws:lambda:eu-central-1:123456789012:layer:bfn-chromium:3", "arn:aws:lambda:eu-central-1:123456789012:layer:bfn-runtime:8"];
const PREFIX = "bfn-test-fn-";
const JOB = "bfn-test-runner-rollout";
const setup: LambdaSetup = { runtime: "nodejs22.x", role: ROLE, layers: NEW, logGroup: "/browserfn/bfn-test/functions", architecture: "x86_64", pollIntervalMs: 1, activeTimeoutMs: 10, sleep: async () => undefined };
const id = (n: number) => `fn_${String(n).padStart(26, "0")}`;
const name = (n: number) => `${PREFIX}${id(n)}`;

/** Lambda's control plane with each function's latest and live layers; Invoke (Event) is recorded. */
function fakeLambda(functions: Record<string, string[]>) {
  const state = new Map(Object.entries(functions).map(([fn, layers]) => [fn, { latest: layers, live: layers, versions: 3 }]));
  const sent: LambdaCommand[] = [];
  const send = async (command: LambdaCommand): Promise<unknown> => {
    sent.push(command);
    const input = command.input as { FunctionName: string; Qualifier?: string; Layers?: string[]; Name?: string };
    if (command.constructor.name === "InvokeCommand") return { StatusCode: 202 };
    const fn = state.get(input.FunctionName);
    if (!fn) throw new ResourceNotFoundException({ $metadata: {}, message: "Function not found" });
    const config = (layers: string[]) => ({ State: "Active", LastUpdateStatus: "Successful", CodeSha256: "sha", Layers: layers.map((Arn) => ({ Arn })) });
    switch (command.constructor.name) {
      case "GetFunctionConfigurationCommand":
        return config(input.Qualifier === undefined ? fn.latest : fn.live);
      case "UpdateFunctionConfigurationCommand":
        fn.latest = input.Layers ?? fn.latest;
        return config(fn.latest);
      case "PublishVersionCommand":
        return { Version: String(++fn.versions) };
      case "UpdateAliasCommand":
        if (input.Name === "live") fn.live = fn.latest;
        return {};
      default:
        throw new Error(`unexpected ${command.constructor.name}`);
    }
  };
  const calls = () => sent.map((command) => [command.constructor.name, command.input] as [string, Record<string, unknown>]);
  return { send, calls, state, sendAs: send as LambdaSend, clear: () => sent.splice(0) };
}

const moveCalls = (fn: string, version: number) => [
  ["GetFunctionConfigurationCommand", { FunctionName: fn, Qualifier: "live" }],
  ["GetFunctionConfigurationCommand", { FunctionName: fn, Qualifier: `v${version}` }],
  ["UpdateFunctionConfigurationCommand", expect.objectContaining({ FunctionName: fn, Role: ROLE, Layers: NEW })],
  ["GetFunctionConfigurationCommand", { FunctionName: fn }],
  ["PublishVersionCommand", { FunctionName: fn, CodeSha256: "sha", Description: `browserfn version ${version}` }],
  ["UpdateAliasCommand", { FunctionName: fn, Name: `v${version}`, FunctionVersion: "4" }],
  ["UpdateAliasCommand", { FunctionName: fn, Name: "live", FunctionVersion: "4" }],
];

const updateEvent = (layers: unknown): CloudFormationCustomResourceUpdateEvent => ({
  RequestType: "Update",
  ServiceToken: "arn:aws:lambda:eu-central-1:123456789012:function:bfn-test-runner-rollout-trigger",
  ResponseURL: "https://cloudformation-custom-resource-response.example/answer",
  StackId: "arn:aws:cloudformation:eu-central-1:123456789012:stack/bfn-test/1",
  RequestId: "req-1",
  LogicalResourceId: "RunnerRolloutLayers",
  PhysicalResourceId: "RunnerRolloutLayers-runner-rollout",
  ResourceType: "Custom::BrowserfnRunnerRollout",
  ResourceProperties: { ServiceToken: "x", RunnerLayers: layers },
  OldResourceProperties: { ServiceToken: "x", RunnerLayers: OLD },
});

describe("the runner rollout on a stack update", () => {
  let memory: MemoryStore;
  beforeAll(async () => {
    memory = await startMemoryStore();
    // Five functions: 1, 2 and 4 on the old layers, 3 on the new ones, 5 with no Lambda (deleted).
    for (const n of [1, 2, 3, 4, 5]) await memory.store.functions.create(functionItem({ function_id: id(n), name: `f${n}`, account_id: n % 2 === 0 ? "acct-b" : "acct-a", latest_version: n }));
  });
  afterAll(async () => memory.close());

  const world = () => fakeLambda({ [name(1)]: OLD, [name(2)]: OLD, [name(3)]: NEW, [name(4)]: OLD });
  const job = (lambda: ReturnType<typeof fakeLambda>, log: string[], pageSize?: number) =>
    makeRolloutJob({ send: lambda.sendAs, setup, functionPrefix: PREFIX, functions: memory.store.functions, invoke: lambda, jobFunction: JOB, log: (line) => log.push(line), ...(pageSize ? { pageSize } : {}) });

  it("starts the job asynchronously on an Update and answers SUCCESS at once; the job moves the functions on old layers only", async () => {
    const lambda = world();
    const answers: [string, unknown][] = [];
    const log: string[] = [];
    await makeRolloutTrigger({ lambda, rolloutFunction: JOB, respond: async (url, body) => void answers.push([url, JSON.parse(body)]), log: (line) => log.push(line) })(updateEvent(NEW));
    const started: RolloutEvent = { kind: "runner_rollout", layers: NEW, cursor: null, totals: { moved: 0, current: 0, missing: 0, failed: 0 } };
    // The trigger's only call: the job, asynchronously (Event), with the new layers.
    expect(lambda.calls()).toEqual([["InvokeCommand", { FunctionName: JOB, InvocationType: "Event", Payload: JSON.stringify(started) }]]);
    expect(answers).toEqual([
      ["https://cloudformation-custom-resource-response.example/answer", { Status: "SUCCESS", Reason: `runner rollout started to ${NEW.join(", ")}`, PhysicalResourceId: "RunnerRolloutLayers-runner-rollout", StackId: updateEvent(NEW).StackId, RequestId: "req-1", LogicalResourceId: "RunnerRolloutLayers" }],
    ]);

    // The job, with the payload the trigger sent.
    const payload: unknown = JSON.parse(String(lambda.calls()[0]?.[1].Payload));
    lambda.clear();
    const result = await job(lambda, log)(payload, () => 15 * 60_000);
    expect(result).toEqual({ outcome: "finished", totals: { moved: 3, current: 1, missing: 1, failed: 0 } });
    const calls = lambda.calls();
    for (const n of [1, 2, 4]) expect(calls.filter(([, input]) => input.FunctionName === name(n))).toEqual(moveCalls(name(n), n));
    // The current one is read, never changed; the deleted one is read; nothing else is sent (no Invoke: it finished).
    expect(calls.filter(([, input]) => input.FunctionName === name(3))).toEqual([["GetFunctionConfigurationCommand", { FunctionName: name(3), Qualifier: "live" }]]);
    expect(calls.filter(([, input]) => input.FunctionName === name(5))).toEqual([["GetFunctionConfigurationCommand", { FunctionName: name(5), Qualifier: "live" }]]);
    expect(calls).toHaveLength(3 * 7 + 2);
    for (const n of [1, 2, 3, 4]) expect(lambda.state.get(name(n))?.live).toEqual(NEW);
    expect(log).toContain(`runner rollout finished: layers ${NEW.join(", ")}: moved 3, current 1, missing 1, failed 0`);
    expect(log.filter((line) => / moved to /.test(line))).toHaveLength(3);

    // Run again (by hand, or Lambda's retry): every function is current, nothing changes.
    lambda.clear();
    expect(await job(lambda, [])(started, () => 15 * 60_000)).toEqual({ outcome: "finished", totals: { moved: 0, current: 4, missing: 1, failed: 0 } });
    expect(lambda.calls().every(([command, input]) => command === "GetFunctionConfigurationCommand" && input.Qualifier === "live")).toBe(true);
  });

  it("near its timeout hands the rest to a new invocation with its position and totals, which goes on from there", async () => {
    const lambda = world();
    const started: RolloutEvent = { kind: "runner_rollout", layers: NEW, cursor: null, totals: { moved: 0, current: 0, missing: 0, failed: 0 } };
    // Time for three functions, then less than the margin.
    let checks = 0;
    const remaining = () => (++checks <= 3 ? 15 * 60_000 : ROLLOUT_MARGIN_MS - 1);
    const first = await job(lambda, [], 2)(started, remaining);
    expect(first.outcome).toBe("continued");
    const calls = lambda.calls();
    const invoke = calls[calls.length - 1];
    expect(invoke?.[0]).toBe("InvokeCommand");
    expect({ ...invoke?.[1], Payload: undefined }).toEqual({ FunctionName: JOB, InvocationType: "Event", Payload: undefined });
    const next = JSON.parse(String(invoke?.[1].Payload)) as RolloutEvent;
    // Three done: the second page (of 2 items) is where it stopped, one of it done.
    expect(next).toEqual({ kind: "runner_rollout", layers: NEW, cursor: { start: expect.objectContaining({ pk: expect.stringMatching(/^ACCOUNT#/), sk: expect.stringMatching(/^FN#/) }), done: 1 }, totals: first.totals });
    const doneBefore = new Set(calls.filter(([command]) => command !== "InvokeCommand").map(([, input]) => input.FunctionName));
    expect(doneBefore.size).toBe(3);

    lambda.clear();
    const log: string[] = [];
    const second = await job(lambda, log, 2)(JSON.parse(JSON.stringify(next)), () => 15 * 60_000);
    const doneAfter = new Set(lambda.calls().map(([, input]) => input.FunctionName));
    // The other two, and only they: nothing done before is read again.
    expect(doneAfter.size).toBe(2);
    expect([...doneAfter].filter((fn) => doneBefore.has(fn))).toEqual([]);
    expect(second).toEqual({ outcome: "finished", totals: { moved: 3, current: 1, missing: 1, failed: 0 } });
    expect(log[log.length - 1]).toBe(`runner rollout finished: layers ${NEW.join(", ")}: moved 3, current 1, missing 1, failed 0`);
    for (const n of [1, 2, 3, 4]) expect(lambda.state.get(name(n))?.live).toEqual(NEW);
  });

  it("end to end on the in-process Lambda: the Update's Event invoke runs the job, which continues itself; live moves, older versions keep their layers", async () => {
    const root = mkdtempSync(path.join(tmpdir(), "bfn-rollout-"));
    let checks = 0;
    // The first invocation has time for two functions only.
    const remaining = () => (++checks === 3 ? ROLLOUT_MARGIN_MS - 1 : 15 * 60_000);
    const log: string[] = [];
    const lambda: InProcessLambda = new InProcessLambda(root, {
      [JOB]: (payload) =>
        makeRolloutJob({ send: ((command) => lambda.send(command)) as LambdaSend, setup, functionPrefix: PREFIX, functions: memory.store.functions, invoke: lambda, jobFunction: JOB, log: (line) => log.push(line), pageSize: 2 })(payload, remaining),
    });
    try {
      // Functions 1, 2 and 4 published on the old layers (v1 = Lambda version 1), 3 on the new ones; 5 has no Lambda.
      for (const n of [1, 2, 3, 4]) {
        await lambda.send(new CreateFunctionCommand({ FunctionName: name(n), Role: ROLE, Code: { ZipFile: new Uint8Array([n]) }, Layers: n === 3 ? NEW : OLD }));
        await lambda.send(new PublishVersionCommand({ FunctionName: name(n) }));
        for (const alias of [`v${n}`, "live"]) await lambda.send(new CreateAliasCommand({ FunctionName: name(n), Name: alias, FunctionVersion: "1" }));
      }
      lambda.sent.splice(0);
      const answers: { Status: string }[] = [];
      await makeRolloutTrigger({ lambda, rolloutFunction: JOB, respond: async (_url, body) => void answers.push(JSON.parse(body)), log: () => undefined })(updateEvent(NEW));
      // Answered before the job ran: CloudFormation does not wait for the rollout.
      expect(answers.map((answer) => answer.Status)).toEqual(["SUCCESS"]);
      await lambda.settled();
      const invokes = lambda.sent.filter((command) => command.constructor.name === "InvokeCommand").map((command) => command.input as { FunctionName: string; InvocationType: string; Payload: string });
      expect(invokes.map(({ FunctionName, InvocationType }) => [FunctionName, InvocationType])).toEqual([[JOB, "Event"], [JOB, "Event"]]);
      expect((JSON.parse(invokes[1]?.Payload ?? "null") as RolloutEvent).cursor?.done).toBe(0);
      expect(log[log.length - 1]).toBe(`runner rollout finished: layers ${NEW.join(", ")}: moved 3, current 1, missing 1, failed 0`);
      const layersOf = async (fn: string, qualifier: string) => ((await lambda.send(new GetFunctionConfigurationCommand({ FunctionName: fn, Qualifier: qualifier }))) as { Layers: { Arn: string }[] }).Layers.map((layer) => layer.Arn);
      for (const n of [1, 2, 3, 4]) expect(await layersOf(name(n), "live")).toEqual(NEW);
      // The version each was first published as keeps its layers: an older browserfn version runs its old runner.
      for (const n of [1, 2, 4]) expect(await layersOf(name(n), "1")).toEqual(OLD);
    } finally {
      await lambda.close();
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("drops a rollout a later stack update superseded, and does nothing on Delete", async () => {
    const lambda = world();
    const log: string[] = [];
    expect(await job(lambda, log)({ kind: "runner_rollout", layers: OLD, cursor: null, totals: { moved: 0, current: 0, missing: 0, failed: 0 } }, () => 15 * 60_000)).toEqual({ outcome: "superseded" });
    expect(await job(lambda, log)({ kind: "runner_rollout", layers: NEW, cursor: null, totals: { moved: 0, current: 0, missing: 0, failed: 0 }, extra: 1 }, () => 15 * 60_000)).toEqual({ outcome: "invalid" });
    const answers: { Status: string }[] = [];
    const trigger = makeRolloutTrigger({ lambda, rolloutFunction: JOB, respond: async (_url, body) => void answers.push(JSON.parse(body)), log: () => undefined });
    await trigger({ ...updateEvent(NEW), RequestType: "Delete" } as never);
    await trigger(updateEvent(["not-an-arn"]));
    expect(lambda.calls()).toEqual([]);
    expect(answers.map((answer) => answer.Status)).toEqual(["SUCCESS", "FAILED"]);
  });
});

describe("the runner rollout beside deploys, and on a rollback", () => {
  let memory: MemoryStore;
  beforeEach(async () => {
    memory = await startMemoryStore();
  });
  afterEach(async () => memory.close());

  const rolloutJob = (lambda: ReturnType<typeof fakeLambda>, log: string[], options: { layers?: string[]; currentLayers?: () => Promise<string[]>; sleep?: (ms: number) => Promise<void> } = {}) =>
    makeRolloutJob({
      send: lambda.sendAs,
      setup: { ...setup, layers: options.layers ?? NEW },
      functionPrefix: PREFIX,
      functions: memory.store.functions,
      invoke: lambda,
      jobFunction: JOB,
      log: (line) => log.push(line),
      ...(options.currentLayers ? { currentLayers: options.currentLayers } : {}),
      ...(options.sleep ? { sleep: options.sleep } : {}),
    });
  const started = (layers: string[]): RolloutEvent => ({ kind: "runner_rollout", layers, cursor: null, totals: { moved: 0, current: 0, missing: 0, failed: 0 } });

  it("leaves a function whose deploy is in progress to its deploy, and moves it once the deploy ended on the old layers", async () => {
    for (const n of [1, 2]) await memory.store.functions.create(functionItem({ function_id: id(n), name: `f${n}`, latest_version: n, status: n === 2 ? "deploying" : "active" }));
    const lambda = fakeLambda({ [name(1)]: OLD, [name(2)]: OLD });
    const log: string[] = [];
    const touchedWhileDeploying: string[] = [];
    const sleeps: number[] = [];
    // The deploy (a job started before the stack update: the old layers) ends while the rollout waits.
    const sleep = async (ms: number) => {
      sleeps.push(ms);
      touchedWhileDeploying.push(...lambda.calls().filter(([, input]) => input.FunctionName === name(2)).map(([command]) => command));
      const fn = await memory.store.functions.getById(id(2));
      await memory.store.functions.replace(fn as NonNullable<typeof fn>, { ...(fn as NonNullable<typeof fn>), status: "active" });
    };
    const result = await rolloutJob(lambda, log, { sleep })(started(NEW), () => 15 * 60_000);
    // Before: it was reconfigured beside its deploy (and showed `failed` on AWS, where the two conflict).
    expect(touchedWhileDeploying).toEqual([]);
    expect(sleeps).toEqual([DEPLOY_LOOK_MS]);
    expect(result).toEqual({ outcome: "finished", totals: { moved: 2, current: 0, missing: 0, failed: 0 } });
    expect(lambda.calls().filter(([, input]) => input.FunctionName === name(2))).toEqual(moveCalls(name(2), 2));
    for (const n of [1, 2]) expect(lambda.state.get(name(n))?.live).toEqual(NEW);
    expect(log).toContain(`runner rollout: ${id(2)} (${name(2)}) is deploying: come back to once its deploy ended`);
  });

  it("finds a function whose deploy put it on the new layers current, and hands functions still deploying on near its timeout", async () => {
    await memory.store.functions.create(functionItem({ function_id: id(1), name: "f1", status: "deploying" }));
    const lambda = fakeLambda({ [name(1)]: OLD });
    // Time for the scan and one look, then less than the margin.
    let checks = 0;
    const remaining = () => (++checks <= 2 ? 15 * 60_000 : ROLLOUT_MARGIN_MS - 1);
    const first = await rolloutJob(lambda, [], { sleep: async () => undefined })(started(NEW), remaining);
    expect(first).toEqual({ outcome: "continued", totals: { moved: 0, current: 0, missing: 0, failed: 0 } });
    const invoke = lambda.calls().at(-1);
    const next = JSON.parse(String(invoke?.[1].Payload)) as RolloutEvent;
    expect(next).toEqual({ kind: "runner_rollout", layers: NEW, cursor: null, totals: first.totals, pending: [id(1)], scanned: true });
    expect(lambda.calls().filter(([command]) => command !== "InvokeCommand")).toEqual([]);

    // Its deploy (a job started after the update) published it on the new layers: the continuation finds it current.
    lambda.state.set(name(1), { latest: NEW, live: NEW, versions: 4 });
    const fn = await memory.store.functions.getById(id(1));
    await memory.store.functions.replace(fn as NonNullable<typeof fn>, { ...(fn as NonNullable<typeof fn>), status: "active" });
    lambda.clear();
    const second = await rolloutJob(lambda, [])(JSON.parse(JSON.stringify(next)), () => 15 * 60_000);
    expect(second).toEqual({ outcome: "finished", totals: { moved: 0, current: 1, missing: 0, failed: 0 } });
    expect(lambda.calls()).toEqual([["GetFunctionConfigurationCommand", { FunctionName: name(1), Qualifier: "live" }]]);
  });

  it("on a rollback (an Update back to the old layer ARNs) moves every function back, and the interrupted rollout stops", async () => {
    for (const n of [1, 2, 3]) await memory.store.functions.create(functionItem({ function_id: id(n), name: `f${n}`, latest_version: n }));
    // The failed update's rollout moved 1 and 2 before CloudFormation rolled the stack back; 3 was still on the old layers.
    const lambda = fakeLambda({ [name(1)]: NEW, [name(2)]: NEW, [name(3)]: OLD });
    const stackLayers = { now: OLD };
    const currentLayers = async () => stackLayers.now;

    // CloudFormation's rollback: the custom resource's Update with the old properties (the job's environment is back to OLD).
    const answers: { Status: string }[] = [];
    await makeRolloutTrigger({ lambda, rolloutFunction: JOB, respond: async (_url, body) => void answers.push(JSON.parse(body)), log: () => undefined })({
      ...updateEvent(OLD),
      OldResourceProperties: { ServiceToken: "x", RunnerLayers: NEW },
    });
    expect(answers.map((answer) => answer.Status)).toEqual(["SUCCESS"]);
    const payload: unknown = JSON.parse(String(lambda.calls()[0]?.[1].Payload));
    expect(payload).toEqual(started(OLD));
    lambda.clear();
    const log: string[] = [];
    const back = await rolloutJob(lambda, log, { layers: OLD, currentLayers })(payload, () => 15 * 60_000);
    expect(back).toEqual({ outcome: "finished", totals: { moved: 2, current: 1, missing: 0, failed: 0 } });
    for (const n of [1, 2, 3]) expect(lambda.state.get(name(n))?.live).toEqual(OLD);
    expect(lambda.calls().filter(([command, input]) => command === "UpdateFunctionConfigurationCommand" && input.FunctionName === name(1))).toEqual([
      ["UpdateFunctionConfigurationCommand", expect.objectContaining({ FunctionName: name(1), Layers: OLD })],
    ]);

    // The update's rollout, still in flight in a container started with the new layers: it stops before its next function.
    lambda.clear();
    const stale = await rolloutJob(lambda, log, { layers: NEW, currentLayers })({ ...started(NEW), cursor: { start: null, done: 2 } }, () => 15 * 60_000);
    // Before: it moved function 3 forward to the new layers again.
    expect(stale).toEqual({ outcome: "superseded", totals: { moved: 0, current: 0, missing: 0, failed: 0 } });
    expect(lambda.calls()).toEqual([]);
    for (const n of [1, 2, 3]) expect(lambda.state.get(name(n))?.live).toEqual(OLD);
    expect(log.at(-1)).toBe(`runner rollout: superseded by the stack's layers ${OLD.join(", ")} (so far: moved 0, current 0, missing 0, failed 0): stopped`);
  });
});
