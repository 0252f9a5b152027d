import { ResourceNotFoundException, TooManyRequestsException } from "@aws-sdk/client-lambda";
import { ApiError } from "../../lambdas/http/errors";
import { createAwsRuntime } from "../../lambdas/runtime/aws/awsRuntime";
import type { ControlPlaneCommand, LambdaCommand } from "../../lambdas/runtime/aws/lambdaClient";
import type { InvokeHooks } from "../../lambdas/runtime/runtime";
import type { RunItem } from "../../lambdas/runs/types";
import { functionItem, runItem } from "../helpers/records";

const FUNCTION_ID = "fn_01jabcdefghjkmnpqrstvwxyz0";
const NAME = `bfn-${FUNCTION_ID}`;

type Reply = unknown | Error;

/** Answers each Invoke with the next scripted reply; records commands, hook calls and run reads in order. */
class FakeLambda {
  readonly sent: LambdaCommand[] = [];
  readonly events: string[] = [];

  constructor(private readonly replies: Reply[]) {}

  async send(command: LambdaCommand): Promise<unknown> {
    this.sent.push(command);
    this.events.push(command.constructor.name);
    const reply = this.replies.shift();
    if (reply instanceof Error) throw reply;
    return reply;
  }

  calls(): [string, unknown][] {
    return this.sent.map((command) => [command.constructor.name, command.input]);
  }
}

const meta = { $metadata: {} };
const notFound = () => new ResourceNotFoundException({ ...meta, message: "Function not found: x" });
const throttled = () => new TooManyRequestsException({ ...meta, message: "Rate Exceeded.", Reason: "ConcurrentInvocationLimitExceeded" });

const fn = functionItem({ function_id: FUNCTION_ID, latest_version: 3, timeout_seconds: 60, memory_mb: 512 });

const COMPLETION = "arn:aws:lambda:eu-central-1:123456789012:function:bfn-run-completion";

/** The control plane's client (the one with SDK retries): an Invoke must never reach it. */
const controlPlaneClient = { send: async (command: ControlPlaneCommand) => Promise.reject(new Error(`${command.constructor.name} went to the control plane's client`)) };

function runRecord(overrides: Partial<RunItem>): RunItem {
  return runItem(fn, { version: 3, ...overrides });
}

describe("the AWS runtime: invoke (the exact Invoke, then the run's record until it is final)", () => {
  const request = { fn, version: 3, runId: "run_1", completionToken: "tok_1", params: { url: "https://example.com" }, waitMs: 0 };

  /** `records`: what each read of the run gives (the last one repeats). */
  async function invoke(records: (RunItem | undefined)[], ...replies: Reply[]) {
    const client = new FakeLambda(replies.length > 0 ? replies : [{ StatusCode: 202 }]);
    const sleeps: number[] = [];
    const runs = {
      get: async (runId: string) => {
        client.events.push(`get ${runId}`);
        const record = records.length > 1 ? records.shift() : records[0];
        if (record instanceof Error) throw record;
        return record;
      },
    };
    const runtime = createAwsRuntime({
      lambda: { controlPlane: controlPlaneClient, invoke: client }, functionPrefix: "bfn-", executionRoleArn: "role", layerArns: [], logGroup: "/browserfn/test/functions", completionArn: COMPLETION, runs,
      runPollIntervalMs: 250, sleep: async (ms) => void sleeps.push(ms),
    });
    const hooks: InvokeHooks = {
      onQueued: async () => void client.events.push("onQueued"),
      onRunning: async () => void client.events.push("onRunning"),
    };
    const result = runtime.invoke({ ...request, waitMs: replies.length > 1 ? 1000 : 0 }, hooks);
    return { client, result, sleeps };
  }

  it("invokes alias vN asynchronously, calls onRunning once Lambda has the event, then reads the run until the recorder made it final", async () => {
    const final = runRecord({ status: "succeeded", result_json: '{"ok":true}', logs: "LOG hi\n", browser_ms: 120, duration_ms: 812, finished_at: "2026-01-01T00:00:01.000Z" });
    const { client, result, sleeps } = await invoke([runRecord({}), runRecord({}), final]);
    expect(await result).toEqual({ status: "succeeded", result_json: '{"ok":true}', error: null, logs: "LOG hi\n", browser_ms: 120, duration_ms: 812, peak_memory_mb: null });
    expect(client.events).toEqual(["InvokeCommand", "onRunning", "get run_1", "get run_1", "get run_1"]);
    expect(sleeps).toEqual([250, 250]);
    expect(client.calls()).toEqual([
      ["InvokeCommand", { FunctionName: NAME, Qualifier: "v3", InvocationType: "Event", Payload: JSON.stringify({ run_id: "run_1", params: { url: "https://example.com" }, timeout_ms: 60_000, completion_token: "tok_1" }) }],
    ]);
  });

  it("reads again after a failed read of the run (the run goes on in Lambda)", async () => {
    const final = runRecord({ status: "succeeded", result_json: "2", duration_ms: 3 });
    const { result } = await invoke([new Error("ProvisionedThroughputExceededException") as unknown as RunItem, final]);
    expect(await result).toMatchObject({ status: "succeeded", result_json: "2" });
  });

  it("gives the recorded failure as it is", async () => {
    const error = { code: "function_timeout", message: "The function did not finish within its timeout of 60 s" };
    const { result } = await invoke([runRecord({ status: "timed_out", error, duration_ms: 60_000 })]);
    expect(await result).toMatchObject({ status: "timed_out", result_json: null, error, duration_ms: 60_000 });
  });

  it("stops reading after the timeout, the event's age and a margin: the run ends as crashed", async () => {
    const { result, sleeps } = await invoke([runRecord({})]);
    expect(await result).toMatchObject({ status: "failed", error: { code: "function_crashed", message: expect.stringContaining("No end of the run was recorded within 180 s") } });
    expect(sleeps.length).toBe(180_000 / 250 + 1);
  });

  it("throws 429 with Retry-After when Lambda throttles, before onRunning (the run never started)", async () => {
    const { client, result } = await invoke([runRecord({})], throttled());
    const error: unknown = await result.catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: "concurrency_limit_exceeded", status: 429, headers: { "retry-after": "1" } });
    expect(client.events).toEqual(["InvokeCommand"]);
  });

  it("retries a throttled invoke with backoff while the wait budget lasts", async () => {
    const final = runRecord({ status: "succeeded", result_json: "1", duration_ms: 5 });
    const { client, result, sleeps } = await invoke([final], throttled(), throttled(), { StatusCode: 202 });
    expect(await result).toMatchObject({ status: "succeeded", result_json: "1" });
    expect(sleeps).toEqual([100, 200]);
    expect(client.events).toEqual(["InvokeCommand", "InvokeCommand", "InvokeCommand", "onRunning", "get run_1"]);
  });

  it("fails the run with function_crashed when the function or version is not deployed", async () => {
    const { client, result } = await invoke([runRecord({})], notFound());
    expect(await result).toMatchObject({ status: "failed", error: { code: "function_crashed", message: `The function is not deployed: Lambda has no ${NAME}:v3` } });
    expect(client.events).toEqual(["InvokeCommand"]);
  });

  it("lets other SDK errors through after onRunning (Lambda may have the event: the caller settles the run as internal_error)", async () => {
    const { client, result } = await invoke([runRecord({})], Object.assign(new Error("socket hang up"), { name: "TimeoutError" }));
    await expect(result).rejects.toThrow("socket hang up");
    expect(client.events).toEqual(["InvokeCommand", "onRunning"]);
  });
});
