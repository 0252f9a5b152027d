import type { RunUploads } from "../../lambdas/runner/lambdaPackage";
import { ApiError } from "../../lambdas/http/errors";
import { createAwsRuntime, MAX_EXECUTION_INPUT_BYTES } from "../../lambdas/runtime/aws/awsRuntime";
import type { ControlPlaneCommand } from "../../lambdas/runtime/aws/lambdaClient";
import type { InvokeHooks } from "../../lambdas/runtime/runtime";
import { RUN_DEADLINE_MARGIN_MS, type RunItem } from "../../lambdas/runs/types";
import { functionItem, runItem } from "../helpers/records";
import type { StartExecutionCommand } from "@aws-sdk/client-sfn";

const FUNCTION_ID = "fn_01jabcdefghjkmnpqrstvwxyz0";
const NAME = `bfn-${FUNCTION_ID}`;
const STATE_MACHINE = "arn:aws:states:eu-central-1:123456789012:stateMachine:bfn-runs";
/** A run's upload forms as the outcome bucket signs them (shape only: signed for real in outcomeBucket tests). */
const uploadsOf = (runId: string): RunUploads => ({
  url: "https://bfn-run-bucket.s3.eu-central-1.amazonaws.com/",
  fields: { "X-Amz-Credential": "AKID/20260101/eu-central-1/s3/aws4_request" },
  outcome: { key: `outcomes/${runId}/outcome.json`, policy: "cG9saWN5", signature: "abc" },
  artifacts: { key_prefix: `outcomes/${runId}/artifact-`, policy_template: "{}", signatures: ["s0", "s1"] },
});

type Reply = unknown | Error;

/** Answers each StartExecution with the next scripted reply; records commands, hook calls and run reads in order. */
class FakeStepFunctions {
  readonly sent: StartExecutionCommand[] = [];
  readonly events: string[] = [];

  constructor(private readonly replies: Reply[]) {}

  async send(command: StartExecutionCommand): Promise<unknown> {
    this.sent.push(command);
    this.events.push(command.constructor.name);
    const reply = this.replies.shift();
    if (reply instanceof Error) throw reply;
    return reply;
  }
}

const fn = functionItem({ function_id: FUNCTION_ID, latest_version: 3, timeout_seconds: 60, memory_mb: 512 });

/** The Lambda control plane's client: a run never reaches it (the workflow invokes the function). */
const lambda = { send: async (command: ControlPlaneCommand) => Promise.reject(new Error(`${command.constructor.name} went to Lambda`)) };

function runRecord(overrides: Partial<RunItem>): RunItem {
  return runItem(fn, { version: 3, ...overrides });
}

describe("the AWS runtime: invoke (the exact workflow start, then the run's record until it is final)", () => {
  const request = { fn, version: 3, runId: "run_1", params: { url: "https://example.com" }, waitMs: 0, artifactsUrl: "https://api.example.com/runs/run_1/artifacts/" };

  /** `records`: what each read of the run gives (the last one repeats). */
  async function invoke(records: (RunItem | undefined)[], ...replies: Reply[]) {
    const client = new FakeStepFunctions(replies.length > 0 ? replies : [{ executionArn: "arn:execution" }]);
    const sleeps: number[] = [];
    const urls: [string, number][] = [];
    const runs = {
      get: async (runId: string) => {
        client.events.push(`get ${runId}`);
        const record = records.length > 1 ? records.shift() : records[0];
        if (record instanceof Error) throw record;
        return record;
      },
    };
    const outcomes = {
      uploads: async (runId: string, expiresIn: number) => {
        urls.push([runId, expiresIn]);
        return uploadsOf(runId);
      },
    };
    const runtime = createAwsRuntime({
      lambda, stepFunctions: client, stateMachineArn: STATE_MACHINE, outcomes, functionPrefix: "bfn-", executionRoleArn: "role", executionRoleId: "AROAEXAMPLEEXECUTION", layerArns: [],
      logGroup: "/browserfn/test/functions", runs, runPollIntervalMs: 250, sleep: async (ms) => void sleeps.push(ms),
    });
    const hooks: InvokeHooks = {
      onQueued: async () => void client.events.push("onQueued"),
      onRunning: async () => void client.events.push("onRunning"),
    };
    const result = runtime.invoke(request, hooks);
    return { client, result, sleeps, urls };
  }

  it("starts an execution named after the run, with alias vN and an upload URL of its own; onRunning; then reads the run until the recorder made it final", async () => {
    const final = runRecord({ status: "succeeded", result_json: '{"ok":true}', logs: "LOG hi\n", browser_ms: 120, duration_ms: 812, finished_at: "2026-01-01T00:00:01.000Z" });
    const { client, result, sleeps, urls } = await invoke([runRecord({}), runRecord({}), final]);
    expect(await result).toEqual({ status: "succeeded", result_json: '{"ok":true}', error: null, logs: "LOG hi\n", browser_ms: 120, duration_ms: 812, peak_memory_mb: null });
    expect(client.events).toEqual(["StartExecutionCommand", "onRunning", "get run_1", "get run_1", "get run_1"]);
    expect(sleeps).toEqual([250, 250]);
    expect(urls).toEqual([["run_1", 60 + 300]]);
    expect(client.sent.map((command) => command.input)).toEqual([
      {
        stateMachineArn: STATE_MACHINE,
        name: "run_1",
        input: JSON.stringify({
          run_id: "run_1",
          // No wait queue here (endNotices absent): nobody is notified, the record is read.
          notify: null,
          function: `${NAME}:v3`,
          timeout_seconds: 60,
          invoke_timeout_seconds: 120,
          event: {
            run_id: "run_1",
            params: { url: "https://example.com" },
            timeout_ms: 60_000,
            uploads: uploadsOf("run_1"),
            artifacts_url: "https://api.example.com/runs/run_1/artifacts/",
            recording: "off",
          },
          throttles: 0,
          attempt: 1,
        }),
      },
    ]);
  });

  it("stops reading the run once its caller stopped waiting (answered 202): the recorder writes its end", async () => {
    const waiting = new AbortController();
    const client = new FakeStepFunctions([{ executionArn: "arn:execution" }]);
    const reads: string[] = [];
    const runtime = createAwsRuntime({
      lambda, stepFunctions: client, stateMachineArn: STATE_MACHINE, outcomes: { uploads: async (runId: string) => uploadsOf(runId) }, functionPrefix: "bfn-", executionRoleArn: "role", executionRoleId: "AROAEXAMPLEEXECUTION",
      layerArns: [], logGroup: "/browserfn/test/functions", runPollIntervalMs: 250,
      runs: { get: async (runId) => { reads.push(runId); if (reads.length === 2) waiting.abort(); return runRecord({}); } },
      sleep: async () => undefined,
    });
    let settled = false;
    void runtime.invoke({ ...request, signal: waiting.signal }, { onQueued: async () => undefined, onRunning: async () => undefined }).finally(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(reads).toEqual(["run_1", "run_1"]);
    expect(settled).toBe(false);
  });

  it("reads again after a failed read of the run (the run goes on in its workflow)", async () => {
    const final = runRecord({ status: "succeeded", result_json: "2", duration_ms: 3 });
    const { result } = await invoke([new Error("ProvisionedThroughputExceededException") as unknown as RunItem, final]);
    expect(await result).toMatchObject({ status: "succeeded", result_json: "2" });
  });

  it("gives the recorded failure as it is", async () => {
    const error = { code: "function_timeout", message: "The function did not finish within its timeout of 60 s" };
    const { result } = await invoke([runRecord({ status: "timed_out", error, duration_ms: 60_000 })]);
    expect(await result).toMatchObject({ status: "timed_out", result_json: null, error, duration_ms: 60_000 });
  });

  it("stops reading at the run's deadline (its timeout and the sweeper's margin): the run ends as crashed", async () => {
    const { result, sleeps } = await invoke([runRecord({})]);
    const limitMs = 60_000 + RUN_DEADLINE_MARGIN_MS;
    expect(await result).toMatchObject({ status: "failed", error: { code: "function_crashed", message: expect.stringContaining(`No end of the run was recorded within ${limitMs / 1000} s`) } });
    expect(sleeps.length).toBe(limitMs / 250 + 1);
  });

  it.each(["ExecutionLimitExceeded", "ThrottlingException"])("throws 429 with Retry-After when Step Functions refuses the start (%s), before onRunning", async (name) => {
    const { client, result } = await invoke([runRecord({})], Object.assign(new Error("limit"), { name }));
    const error: unknown = await result.catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: "concurrency_limit_exceeded", status: 429, headers: { "retry-after": "1" } });
    expect(client.events).toEqual(["StartExecutionCommand"]);
  });

  it("waits for a run whose start has an unknown outcome (timeouts, 5xx): its execution may have started", async () => {
    const final = runRecord({ status: "succeeded", result_json: "1", duration_ms: 5 });
    const { client, result } = await invoke([final], Object.assign(new Error("socket hang up"), { name: "TimeoutError" }));
    expect(await result).toMatchObject({ status: "succeeded", result_json: "1" });
    expect(client.events).toEqual(["StartExecutionCommand", "onRunning", "get run_1"]);
  });

  it("throws a start refused outright (4xx) before onRunning: nothing started", async () => {
    const refused = Object.assign(new Error("not authorized to perform states:StartExecution"), { name: "AccessDeniedException", $metadata: { httpStatusCode: 400 } });
    const { client, result } = await invoke([runRecord({})], refused);
    await expect(result).rejects.toThrow("not authorized");
    expect(client.events).toEqual(["StartExecutionCommand"]);
  });

  it("refuses parameters too large for the workflow's input with 413 before anything starts", async () => {
    const client = new FakeStepFunctions([]);
    const runtime = createAwsRuntime({
      lambda, stepFunctions: client, stateMachineArn: STATE_MACHINE, outcomes: { uploads: async (runId: string) => uploadsOf(runId) }, functionPrefix: "bfn-", executionRoleArn: "role", executionRoleId: "AROAEXAMPLEEXECUTION",
      layerArns: [], logGroup: "/browserfn/test/functions", runs: { get: async () => undefined },
    });
    const hooks: InvokeHooks = { onQueued: async () => undefined, onRunning: async () => void client.events.push("onRunning") };
    const error: unknown = await runtime.invoke({ ...request, params: { html: "x".repeat(300_000) } }, hooks).catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ code: "payload_too_large", status: 413, details: { limit: MAX_EXECUTION_INPUT_BYTES } });
    expect(client.events).toEqual([]);
  });

  it("sends a run's secrets without their envelope when the envelope would not fit the workflow's input, and with it otherwise", async () => {
    const starts = async (paramBytes: number) => {
      const client = new FakeStepFunctions([{ executionArn: "arn:execution" }]);
      const runtime = createAwsRuntime({
        lambda, stepFunctions: client, stateMachineArn: STATE_MACHINE, outcomes: { uploads: async (runId: string) => uploadsOf(runId) }, functionPrefix: "bfn-", executionRoleArn: "role", executionRoleId: "AROAEXAMPLEEXECUTION",
        layerArns: [], logGroup: "/browserfn/test/functions", runs: { get: async () => runRecord({ status: "succeeded", finished_at: "2026-01-01T00:00:01.000Z" }) }, runPollIntervalMs: 1, sleep: async () => undefined,
        runDataKeys: { seal: async (_functionId, _runner, values) => ({ data_key: "KEY", items: Object.keys(values).map((name) => ({ name, sealed: "e".repeat(60_000) })) }) },
      });
      const secrets = { values: { A: "a" }, sealed: [{ name: "A", sealed: "s".repeat(60_000), updated_at: "2026-01-01T00:00:00.000Z" }] };
      await runtime.invoke({ ...request, params: { html: "x".repeat(paramBytes) }, secrets }, { onQueued: async () => undefined, onRunning: async () => undefined });
      const input = JSON.parse(String(client.sent[0]?.input.input)) as { event: { secrets: { envelope?: unknown; items: unknown[] } } };
      return { envelope: input.event.secrets.envelope !== undefined, items: input.event.secrets.items.length, bytes: Buffer.byteLength(String(client.sent[0]?.input.input)) };
    };
    expect(await starts(1_000)).toMatchObject({ envelope: true, items: 1 });
    // 60 KB of stored secret, 60 KB of envelope and 150 KB of parameters: over the limit (252 KiB) with both, under it with the stored form only.
    const large = await starts(150_000);
    expect(large).toMatchObject({ envelope: false, items: 1 });
    expect(large.bytes).toBeLessThanOrEqual(MAX_EXECUTION_INPUT_BYTES);
  });
});

// #23.1: a waiting caller's reads of the run's record back off (RUN_READS), so their number is
// bounded by the caller's window, not by a polling rate: it was one consistent read every 200 ms.
describe("the AWS runtime: how often a waiting caller reads the run", () => {
  const request = { fn, version: 3, runId: "run_1", params: {}, waitMs: 0, artifactsUrl: "https://api.example.com/runs/run_1/artifacts/" };

  /** A run that ends after `endsAfterMs` of (fake) waiting; the caller stops waiting after `windowMs`. */
  async function reads(endsAfterMs: number, windowMs: number) {
    let waited = 0;
    let count = 0;
    const caller = new AbortController();
    const runtime = createAwsRuntime({
      lambda, stepFunctions: new FakeStepFunctions([{ executionArn: "arn:execution" }]), stateMachineArn: STATE_MACHINE,
      outcomes: { uploads: async (runId: string) => uploadsOf(runId) },
      functionPrefix: "bfn-", executionRoleArn: "role", executionRoleId: "AROAEXAMPLEEXECUTION", layerArns: [], logGroup: "/g",
      runs: {
        get: async () => {
          count++;
          return waited >= endsAfterMs ? runRecord({ status: "succeeded", result_json: "1", duration_ms: waited }) : runRecord({});
        },
      },
      sleep: async (ms) => {
        waited += ms;
        if (waited >= windowMs) caller.abort();
      },
    });
    const result = runtime.invoke({ ...request, signal: caller.signal }, { onQueued: async () => undefined, onRunning: async () => undefined });
    const ended = await Promise.race([result.then(() => "ended"), new Promise((resolve) => setTimeout(() => resolve("answered 202"), 50))]);
    return { count, ended, lateMs: waited - endsAfterMs };
  }

  it("reads a 10 s run about 10 times and sees its end at most 1.5 s late", async () => {
    const { count, ended, lateMs } = await reads(10_000, 25_000);
    expect(ended).toBe("ended");
    expect(count).toBeLessThanOrEqual(11);
    expect(lateMs).toBeLessThanOrEqual(1500);
  });

  it("reads a run longer than the 25 s window at most 20 times, whatever its length", async () => {
    for (const runMs of [60_000, 300_000, 900_000]) {
      const { count, ended } = await reads(runMs, 25_000);
      expect(ended).toBe("answered 202");
      expect(count).toBeLessThanOrEqual(20);
    }
  });
});
