import { retriesOption } from "../../bin/cli/commands/deploy";
import { MAX_BACKOFF_MS, attemptLogs, backoffMs, nextAttempt, shouldRetry } from "../../lambdas/retries/retryPolicy";
import { retriesOf } from "../../lambdas/retries/retrySettings";
import type { InvokeResult } from "../../lambdas/runtime/runtime";
import type { RunItem } from "../../lambdas/runs/types";

const failed = (code: string): InvokeResult => ({ status: "failed", result_json: null, error: { code, message: code }, logs: "", duration_ms: 5, browser_ms: 0, peak_memory_mb: null });
const timedOut: InvokeResult = { ...failed("function_timeout"), status: "timed_out" };
const succeeded: InvokeResult = { ...failed("x"), status: "succeeded", error: null, result_json: "1" };

describe("shouldRetry", () => {
  const run = { attempt: 1, max_attempts: 3 };
  it("retries a function's failure, a crash and a timeout while attempts are left", () => {
    expect(shouldRetry(run, failed("function_error"))).toBe(true);
    expect(shouldRetry(run, failed("function_crashed"))).toBe(true);
    expect(shouldRetry(run, timedOut)).toBe(true);
    expect(shouldRetry({ attempt: 2, max_attempts: 3 }, timedOut)).toBe(true);
  });
  it("never retries the last attempt, a run of one attempt (a sync call, a record from before retries), a success, or what its code did not cause", () => {
    expect(shouldRetry({ attempt: 3, max_attempts: 3 }, failed("function_error"))).toBe(false);
    expect(shouldRetry({ attempt: 1, max_attempts: 1 }, failed("function_error"))).toBe(false);
    expect(shouldRetry({}, failed("function_error"))).toBe(false);
    expect(shouldRetry(run, succeeded)).toBe(false);
    for (const code of ["invalid_parameters", "concurrency_limit_exceeded", "invocation_quota_exceeded", "internal_error", "function_not_found", "canceled"]) {
      expect(shouldRetry(run, failed(code))).toBe(false);
    }
  });
});

describe("backoffMs", () => {
  it("doubles per attempt from the base, at most one hour", () => {
    expect([1, 2, 3, 4].map((attempt) => backoffMs(attempt, 10))).toEqual([10_000, 20_000, 40_000, 80_000]);
    expect(backoffMs(9, 3600)).toBe(MAX_BACKOFF_MS);
    expect(backoffMs(9, 60)).toBe(MAX_BACKOFF_MS); // 60 s × 256 would be 4 h 16 min
  });
});

describe("nextAttempt", () => {
  it("queues the same run for its next attempt with the ended one in attempts", () => {
    const run = {
      run_id: "run_1", account_id: "a", function_id: "fn", function_name: "f", version: 1, trigger: "http", status: "running", params: {},
      result_json: null, error: null, logs: "", queued_at: "2026-11-27T10:00:00.000Z", deadline_at: "2026-11-27T10:20:00.000Z",
      started_at: "2026-11-27T10:00:01.000Z", finished_at: null, duration_ms: null, browser_ms: 0, peak_memory_mb: null, memory_mb: 1024,
      request_origin: null, sdk_version: null, attempt: 2, max_attempts: 3,
      attempts: [{ attempt: 1, status: "failed", error: { code: "function_error", message: "x" }, started_at: "2026-11-27T09:59:00.000Z", finished_at: "2026-11-27T09:59:30.000Z", duration_ms: 3 }],
    } as RunItem;
    const next = nextAttempt(run, { ...timedOut, logs: "kept" }, { backoffSeconds: 5, timeoutSeconds: 60 }, new Date("2026-11-27T10:01:00.000Z"));
    expect(next).toMatchObject({ run_id: "run_1", status: "queued", queue_reason: "retry_backoff", attempt: 3, retry_at: "2026-11-27T10:01:10.000Z", started_at: null, finished_at: null, logs: "kept", error: null, result_json: null });
    expect(next.attempts?.map((a) => [a.attempt, a.status, a.started_at, a.finished_at])).toEqual([
      [1, "failed", "2026-11-27T09:59:00.000Z", "2026-11-27T09:59:30.000Z"],
      [2, "timed_out", "2026-11-27T10:00:01.000Z", "2026-11-27T10:01:00.000Z"],
    ]);
  });
});

describe("attemptLogs", () => {
  it("heads each attempt's logs after the earlier attempts' when the run may have more than one", () => {
    expect(attemptLogs({ attempt: 1, max_attempts: 1, logs: "" }, "a\n")).toBe("a\n");
    expect(attemptLogs({ attempt: 1, max_attempts: 2, logs: "" }, "a\n")).toBe("--- attempt 1 of 2 ---\na\n");
    expect(attemptLogs({ attempt: 2, max_attempts: 2, logs: "--- attempt 1 of 2 ---\na" }, "b\n")).toBe("--- attempt 1 of 2 ---\na\n--- attempt 2 of 2 ---\nb\n");
  });
});

describe("retries settings", () => {
  it("reads a stored setting within bounds, and none as one attempt", () => {
    expect(retriesOf({})).toEqual({ max_attempts: 1, backoff_seconds: 10 });
    expect(retriesOf({ retries: null })).toEqual({ max_attempts: 1, backoff_seconds: 10 });
    expect(retriesOf({ retries: { max_attempts: 99, backoff_seconds: 2 } })).toEqual({ max_attempts: 1, backoff_seconds: 2 });
  });
  it("takes --retries N[,BACKOFF] or none in the CLI", () => {
    expect(retriesOption(undefined)).toBeUndefined();
    expect(retriesOption("none")).toBeNull();
    expect(retriesOption("3")).toEqual({ max_attempts: 3 });
    expect(retriesOption("3,30")).toEqual({ max_attempts: 3, backoff_seconds: 30 });
    for (const bad of ["0", "11", "3,0", "3,3601", "x", "3,", "-1"]) expect(() => retriesOption(bad)).toThrow(/--retries/);
  });
});
