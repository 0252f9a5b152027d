import { MAX_LOG_BYTES, MAX_RESULT_BYTES, capBytes, resultTooLarge } from "../../lambdas/runner/outcomeSchema";
import { makeRunCompletionHandler } from "../../lambdas/runtime/aws/recordCompletion";
import type { DestinationEvent } from "../../lambdas/runtime/aws/completionEvent";
import type { RunItem } from "../../lambdas/runs/types";
import type { Store } from "../../lambdas/store/store";
import { startMemoryStore } from "../helpers/memoryStore";
import { functionItem, runItem } from "../helpers/records";

const FUNCTION_ID = "fn_01jabcdefghjkmnpqrstvwxyz0";
const ARN = `arn:aws:lambda:eu-west-1:123456789012:function:bfn-${FUNCTION_ID}:v2`;
const STARTED = "2026-03-01T10:00:00.000Z";
const NOW = new Date("2026-03-01T10:00:42.500Z");

function runningRun(runId: string): RunItem {
  const fn = functionItem({ function_id: FUNCTION_ID, memory_mb: 512 });
  return runItem(fn, {
    run_id: runId,
    version: 2,
    params: { url: "https://example.com" },
    queued_at: STARTED,
    started_at: STARTED,
    completion_token: `token-of-${runId}`,
  });
}

/** A destination event as Lambda sends it for an Event invocation of alias v2. */
function destinationEvent(runId: string, ending: Pick<DestinationEvent, "responseContext" | "responsePayload"> & { condition: string }): DestinationEvent {
  return {
    version: "1.0",
    timestamp: NOW.toISOString(),
    requestContext: { requestId: "req-1", functionArn: ARN, condition: ending.condition, approximateInvokeCount: 1 },
    requestPayload: { run_id: runId, params: { url: "https://example.com" }, timeout_ms: 60_000, completion_token: `token-of-${runId}` },
    ...(ending.responseContext ? { responseContext: ending.responseContext } : {}),
    ...(ending.responsePayload === undefined ? {} : { responsePayload: ending.responsePayload }),
  };
}

const failure = (errorType: string | undefined, errorMessage: string) => ({
  condition: "RetriesExhausted",
  responseContext: { statusCode: 200, executedVersion: "2", functionError: "Unhandled" },
  responsePayload: { ...(errorType ? { errorType } : {}), errorMessage },
});

describe("the run-completion Lambda (the destination of every function's Lambda)", () => {
  let memory: { store: Store; close(): Promise<void> };
  const logs: string[] = [];
  let handler: ReturnType<typeof makeRunCompletionHandler>;
  let n = 0;

  beforeAll(async () => {
    memory = await startMemoryStore();
    handler = makeRunCompletionHandler({ store: memory.store, clock: { now: () => NOW }, log: (line) => void logs.push(line) });
  });
  afterAll(() => memory.close());

  /** A running run holding a lease, as startRun leaves it; a fresh function each time, so that counters are its own. */
  async function startedRun(): Promise<RunItem> {
    const run = { ...runningRun(`run_${++n}`) };
    await memory.store.runs.put(run);
    await memory.store.limits.admit(run.account_id, run.run_id, { concurrency: 100, invocationsPerMonth: 1000 }, NOW.getTime() + 600_000, NOW);
    return run;
  }

  it("records a success: the runner's outcome, the duration since the start, metered once and the lease given back", async () => {
    const run = await startedRun();
    const before = await memory.store.meters.functionCounters(FUNCTION_ID);
    const event = destinationEvent(run.run_id, {
      condition: "Success",
      responseContext: { statusCode: 200, executedVersion: "2" },
      responsePayload: { status: "succeeded", result_json: '{"title":"x"}', logs: "LOG hi\n", browser_ms: 900 },
    });
    await handler(event);
    await handler(event); // Lambda may deliver an event twice: a run ends and is counted once
    expect(await memory.store.runs.get(run.run_id)).toEqual({
      ...run, status: "succeeded", result_json: '{"title":"x"}', error: null, logs: "LOG hi\n", browser_ms: 900,
      duration_ms: 42_500, finished_at: NOW.toISOString(), peak_memory_mb: null,
    });
    const after = await memory.store.meters.functionCounters(FUNCTION_ID);
    expect(after.invocations - before.invocations).toBe(1);
    expect(await memory.store.limits.current("acct", NOW)).toMatchObject({ inFlight: 0 });
  });

  it("records a failed outcome of the user's code without its stack", async () => {
    const run = await startedRun();
    const outcome = { status: "failed", error: { code: "function_error", message: "boom", stack: "Error: boom\n at x" }, logs: "ERROR x\n", browser_ms: 0 };
    await handler(destinationEvent(run.run_id, { condition: "Success", responseContext: { statusCode: 200 }, responsePayload: outcome }));
    expect(await memory.store.runs.get(run.run_id)).toMatchObject({ status: "failed", error: { code: "function_error", message: "boom" }, logs: "ERROR x\n" });
  });

  it.each([
    ["a timeout", "timed_out", "function_timeout", failure("Sandbox.Timedout", "RequestId: x Error: Task timed out after 60.00 seconds"), "The function did not finish within its timeout of 60 s"],
    ["a timeout without errorType", "timed_out", "function_timeout", failure(undefined, "2026-03-01T10:01:00.000Z x Task timed out after 60.06 seconds"), "The function did not finish within its timeout of 60 s"],
    ["running out of memory", "failed", "function_crashed", failure("Runtime.OutOfMemory", "RequestId: x Error: Runtime exited with error: signal: killed"), "The function ran out of memory: its limit is 512 MB"],
    ["a crash", "failed", "function_crashed", failure("Runtime.ExitError", "RequestId: x Error: Runtime exited with error: exit status 1"), "The function's process crashed: Runtime.ExitError: RequestId: x Error: Runtime exited with error: exit status 1"],
    ["a result over Lambda's limit", "failed", "result_too_large", failure("Function.ResponseSizeTooLarge", "Response payload size exceeded"), resultTooLarge().message],
    ["a result over Lambda's limit, with its size", "failed", "result_too_large", failure("Function.ResponseSizeTooLarge", "Response payload size (7340032 bytes) exceeded maximum allowed payload size (6291556 bytes)."), resultTooLarge(7_340_032).message],
    ["an event Lambda never ran", "failed", "concurrency_limit_exceeded", { condition: "EventAgeExceeded" }, "Lambda could not start the run before its event expired: the function's concurrency stayed exhausted"],
  ])("maps %s to %s / %s", async (_what, status, code, ending, message) => {
    const run = await startedRun();
    const before = await memory.store.meters.functionCounters(FUNCTION_ID);
    await handler(destinationEvent(run.run_id, ending));
    expect(await memory.store.runs.get(run.run_id)).toMatchObject({ status, result_json: null, error: { code, message }, logs: "", duration_ms: 42_500, finished_at: NOW.toISOString() });
    expect((await memory.store.meters.functionCounters(FUNCTION_ID)).invocations - before.invocations).toBe(1);
  });

  it("parses the runner's answer as untrusted: its own fields only, browser time within the measured duration, memory within the limit", async () => {
    const run = await startedRun();
    const victim = await startedRun();
    const answer = {
      status: "succeeded", result_json: '{"ok":true}', logs: "LOG hi\n", browser_ms: 10_000_000, peak_memory_mb: 99_999,
      pk: `RUN#${victim.run_id}`, sk: "RUN", gsi1pk: "FNID#fn_other#RUNS", run_id: victim.run_id,
      account_id: "other", function_id: "fn_other", duration_ms: 1, finished_at: "1999-01-01T00:00:00.000Z", admin: true,
    };
    await handler(destinationEvent(run.run_id, { condition: "Success", responseContext: { statusCode: 200 }, responsePayload: answer }));
    const ended = await memory.store.runs.get(run.run_id);
    expect(ended).toEqual({
      ...run, status: "succeeded", result_json: '{"ok":true}', error: null, logs: "LOG hi\n",
      browser_ms: 42_500, duration_ms: 42_500, peak_memory_mb: 512, finished_at: NOW.toISOString(),
    });
    expect(await memory.store.runs.get(victim.run_id)).toEqual(victim);
    expect((await memory.store.meters.usage("other", NOW.toISOString().slice(0, 7))).total.invocations).toBe(0);
  });

  it.each([
    ["a status outside the fixed set", { status: "queued", result_json: "1", logs: "", browser_ms: 0 }],
    ["an error code the run may not report", { status: "failed", error: { code: "internal_error", message: "x" }, logs: "", browser_ms: 0 }],
    ["a result that is not JSON text", { status: "succeeded", result_json: "{not json", logs: "", browser_ms: 0 }],
    ["no logs", { status: "succeeded", result_json: "1", browser_ms: 0 }],
    ["not an object", "just text"],
  ])("ends a run whose answer has %s as crashed", async (_what, answer) => {
    const run = await startedRun();
    await handler(destinationEvent(run.run_id, { condition: "Success", responseContext: { statusCode: 200 }, responsePayload: answer }));
    const ended = await memory.store.runs.get(run.run_id);
    expect(ended).toMatchObject({ status: "failed", result_json: null, error: { code: "function_crashed" }, logs: "", browser_ms: 0, peak_memory_mb: null });
    expect(ended?.error?.message).toContain("not a run outcome");
  });

  it("fails a result over the inline limit as result_too_large, and caps the logs", async () => {
    const run = await startedRun();
    const result_json = JSON.stringify("x".repeat(MAX_RESULT_BYTES));
    const answer = { status: "succeeded", result_json, logs: "y".repeat(MAX_LOG_BYTES * 2), browser_ms: 5 };
    await handler(destinationEvent(run.run_id, { condition: "Success", responseContext: { statusCode: 200 }, responsePayload: answer }));
    const ended = await memory.store.runs.get(run.run_id);
    expect(ended).toMatchObject({ status: "failed", result_json: null, error: resultTooLarge(Buffer.byteLength(result_json)), browser_ms: 5 });
    expect(ended?.logs).toBe(capBytes(answer.logs, MAX_LOG_BYTES));
    expect(ended?.logs.length).toBeLessThan(answer.logs.length);
  });

  it("leaves a run that ended already as it is, uncounted", async () => {
    const run = await startedRun();
    const ended = { ...run, status: "failed" as const, error: { code: "internal_error", message: "x" }, finished_at: STARTED, duration_ms: 1 };
    await memory.store.runs.put(ended);
    const before = await memory.store.meters.functionCounters(FUNCTION_ID);
    await handler(destinationEvent(run.run_id, { condition: "Success", responseContext: { statusCode: 200 }, responsePayload: { status: "succeeded", result_json: "1", logs: "", browser_ms: 0 } }));
    expect(await memory.store.runs.get(run.run_id)).toEqual(ended);
    expect(await memory.store.meters.functionCounters(FUNCTION_ID)).toEqual(before);
  });

  it("drops, with a log line, events without a run, of an unknown run, or of another function's Lambda", async () => {
    const run = await startedRun();
    logs.length = 0;
    await handler({ requestContext: { condition: "Success" }, requestPayload: { nothing: true } });
    await handler(destinationEvent("run_unknown", { condition: "Success" }));
    const foreign = destinationEvent(run.run_id, { condition: "Success", responsePayload: { status: "succeeded", result_json: "1", logs: "", browser_ms: 0 } });
    await handler({ ...foreign, requestContext: { ...foreign.requestContext, functionArn: "arn:aws:lambda:eu-west-1:1:function:bfn-fn_other:v1" } });
    expect(logs).toEqual([
      expect.stringContaining("an event without a run"),
      "run completion: no run run_unknown",
      expect.stringContaining(`belongs to ${FUNCTION_ID}`),
    ]);
    expect(await memory.store.runs.get(run.run_id)).toMatchObject({ status: "running" });
  });

  it("drops a forged event: one without the run's completion token, or with another", async () => {
    const run = await startedRun();
    const { inFlight } = await memory.store.limits.current(run.account_id, NOW);
    logs.length = 0;
    const genuine = destinationEvent(run.run_id, { condition: "Success", responsePayload: { status: "succeeded", result_json: '"forged"', logs: "", browser_ms: 0 } });
    const payload = genuine.requestPayload as Record<string, unknown>;
    await handler({ ...genuine, requestPayload: { ...payload, completion_token: undefined } });
    await handler({ ...genuine, requestPayload: { ...payload, completion_token: "token-of-run_1" } });
    await handler({ ...genuine, requestPayload: { ...payload, completion_token: `${String(payload.completion_token)}x` } });
    expect(logs).toEqual(Array(3).fill(`run completion: the event for run ${run.run_id} does not carry its completion token`));
    expect(await memory.store.runs.get(run.run_id)).toMatchObject({ status: "running", result_json: null });
    expect(await memory.store.limits.current(run.account_id, NOW)).toMatchObject({ inFlight });
    await handler(genuine);
    expect(await memory.store.runs.get(run.run_id)).toMatchObject({ status: "succeeded", result_json: '"forged"' });
    expect(await memory.store.limits.current(run.account_id, NOW)).toMatchObject({ inFlight: inFlight - 1 });
  });

  it("ends a run recorded before completion tokens existed by its function's ARN alone", async () => {
    const { completion_token: _, ...legacy } = await startedRun();
    await memory.store.runs.put(legacy);
    const event = destinationEvent(legacy.run_id, { condition: "Success", responsePayload: { status: "succeeded", result_json: "1", logs: "", browser_ms: 0 } });
    await handler({ ...event, requestPayload: { ...(event.requestPayload as object), completion_token: undefined } });
    expect(await memory.store.runs.get(legacy.run_id)).toMatchObject({ status: "succeeded" });
  });
});
