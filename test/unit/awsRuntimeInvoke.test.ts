import { ResourceNotFoundException, TooManyRequestsException } from "@aws-sdk/client-lambda";
import type { FunctionItem } from "../../lambdas/functions/types";
import { ApiError } from "../../lambdas/http/errors";
import { createAwsRuntime } from "../../lambdas/runtime/aws/awsRuntime";
import type { LambdaCommand } from "../../lambdas/runtime/aws/lambdaClient";
import type { InvokeHooks } from "../../lambdas/runtime/runtime";

const FUNCTION_ID = "fn_01jabcdefghjkmnpqrstvwxyz0";
const NAME = `bfn-${FUNCTION_ID}`;

type Reply = unknown | Error;

/** Answers each Invoke with the next scripted reply; records commands and hook calls in order. */
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

const fn = {
  account_id: "acct", function_id: FUNCTION_ID, name: "scraper", description: null, status: "active", status_reason: null,
  latest_version: 3, variables: [], schedule: null, schedule_timezone: "UTC", schedule_params: null, next_run_at: null,
  timeout_seconds: 60, memory_mb: 512, shared: false, reference_workflow_id: null, created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-01T00:00:00.000Z", code_sha256: "0".repeat(64), revision: 1,
} satisfies FunctionItem;

describe("the AWS runtime: invoke (the exact Invoke and how its answer maps to the run)", () => {
  const payload = (value: unknown) => new TextEncoder().encode(typeof value === "string" ? value : JSON.stringify(value));
  const request = { fn, version: 3, runId: "run_1", params: { url: "https://example.com" }, waitMs: 0 };

  async function invoke(...replies: Reply[]) {
    const client = new FakeLambda(replies);
    const sleeps: number[] = [];
    const runtime = createAwsRuntime({ lambda: client, functionPrefix: "bfn-", executionRoleArn: "role", layerArns: [], sleep: async (ms) => void sleeps.push(ms) });
    const hooks: InvokeHooks = {
      onQueued: async () => void client.events.push("onQueued"),
      onRunning: async () => void client.events.push("onRunning"),
    };
    const result = runtime.invoke({ ...request, waitMs: replies.length > 1 ? 1000 : 0 }, hooks);
    return { client, result, sleeps };
  }

  it("calls onRunning, then invokes alias vN synchronously, and returns the runner's outcome", async () => {
    const tail = Buffer.from("REPORT RequestId: x Duration: 812.33 ms Billed Duration: 813 ms Memory Size: 512 MB Max Memory Used: 301 MB").toString("base64");
    const { client, result } = await invoke({ StatusCode: 200, LogResult: tail, Payload: payload({ status: "succeeded", result_json: '{"ok":true}', logs: "LOG hi\n", browser_ms: 120 }) });
    expect(await result).toEqual({ status: "succeeded", result_json: '{"ok":true}', error: null, logs: "LOG hi\n", browser_ms: 120, duration_ms: expect.any(Number), peak_memory_mb: 301 });
    expect(client.events).toEqual(["onRunning", "InvokeCommand"]);
    expect(client.calls()).toEqual([
      ["InvokeCommand", { FunctionName: NAME, Qualifier: "v3", InvocationType: "RequestResponse", LogType: "Tail", Payload: JSON.stringify({ run_id: "run_1", params: { url: "https://example.com" }, timeout_ms: 60_000 }) }],
    ]);
  });

  it("passes on a failed outcome of the user's code, without its stack", async () => {
    const outcome = { status: "failed", error: { code: "function_error", message: "boom", stack: "Error: boom\n at x" }, logs: "ERROR x\n", browser_ms: 0 };
    const { result } = await invoke({ StatusCode: 200, Payload: payload(outcome) });
    expect(await result).toMatchObject({ status: "failed", result_json: null, error: { code: "function_error", message: "boom" }, logs: "ERROR x\n", peak_memory_mb: null });
    expect((await result).error).toEqual({ code: "function_error", message: "boom" });
  });

  it.each([
    [{ errorType: "Sandbox.Timedout", errorMessage: "RequestId: x Error: Task timed out after 60.00 seconds" }, "timed_out", "function_timeout", "The function did not finish within its timeout of 60 s"],
    [{ errorMessage: "2026-01-01T00:00:00.000Z x Task timed out after 60.06 seconds" }, "timed_out", "function_timeout", "The function did not finish within its timeout of 60 s"],
    [{ errorType: "Runtime.OutOfMemory", errorMessage: "RequestId: x Error: Runtime exited with error: signal: killed" }, "failed", "function_crashed", "The function ran out of memory: its limit is 512 MB"],
    [{ errorType: "Runtime.ExitError", errorMessage: "RequestId: x Error: Runtime exited with error: signal: killed" }, "failed", "function_crashed", "The function ran out of memory: its limit is 512 MB"],
    [{ errorType: "Runtime.ExitError", errorMessage: "RequestId: x Error: Runtime exited with error: exit status 1" }, "failed", "function_crashed", "The function's process crashed: Runtime.ExitError: RequestId: x Error: Runtime exited with error: exit status 1"],
    [{ errorType: "Error", errorMessage: "ENOENT: no such file or directory, open '/var/task/code.cjs'" }, "failed", "function_crashed", "The function's process crashed: Error: ENOENT: no such file or directory, open '/var/task/code.cjs'"],
    [{ errorType: "Function.ResponseSizeTooLarge", errorMessage: "Response payload size exceeded maximum allowed payload size (6291556 bytes)." }, "failed", "result_not_serializable", "The return value is larger than Lambda's response limit: Response payload size exceeded maximum allowed payload size (6291556 bytes)."],
  ])("maps the FunctionError %j to %s / %s", async (error, status, code, message) => {
    const { result } = await invoke({ StatusCode: 200, FunctionError: "Unhandled", Payload: payload(error) });
    expect(await result).toEqual({ status, result_json: null, error: { code, message }, logs: "", browser_ms: 0, duration_ms: expect.any(Number), peak_memory_mb: null });
  });

  it("throws 429 with Retry-After when Lambda throttles (after onRunning: the caller settles the run)", async () => {
    const { client, result } = await invoke(throttled());
    const error: unknown = await result.catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: "concurrency_limit_exceeded", status: 429, headers: { "retry-after": "1" } });
    expect(client.events).toEqual(["onRunning", "InvokeCommand"]);
  });

  it("retries a throttled invoke with backoff while the wait budget lasts", async () => {
    const { client, result, sleeps } = await invoke(throttled(), throttled(), { StatusCode: 200, Payload: payload({ status: "succeeded", result_json: "1", logs: "", browser_ms: 0 }) });
    expect(await result).toMatchObject({ status: "succeeded", result_json: "1" });
    expect(sleeps).toEqual([100, 200]);
    expect(client.events).toEqual(["onRunning", "InvokeCommand", "InvokeCommand", "InvokeCommand"]);
  });

  it("fails the run with function_crashed when the function or version is not deployed", async () => {
    const { result } = await invoke(notFound());
    expect(await result).toMatchObject({ status: "failed", error: { code: "function_crashed", message: `The function is not deployed: Lambda has no ${NAME}:v3` } });
  });

  it("lets other SDK errors through (the caller settles the run as internal_error)", async () => {
    const { result } = await invoke(Object.assign(new Error("socket hang up"), { name: "TimeoutError" }));
    await expect(result).rejects.toThrow("socket hang up");
  });

  it("fails the run with function_crashed when the answer is not a run outcome", async () => {
    const { result } = await invoke({ StatusCode: 200, Payload: payload("null") });
    expect(await result).toMatchObject({ status: "failed", error: { code: "function_crashed" } });
  });
});
