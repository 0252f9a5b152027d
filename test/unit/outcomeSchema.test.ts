import {
  MAX_LOG_BYTES,
  MAX_RESULT_BYTES,
  type ParsedOutcome,
  parseRunOutcome,
  resultTooLarge,
} from "../../lambdas/runner/outcomeSchema";
import type { RunOutcome } from "../../lambdas/runner/protocol";

const LOG_NOTE = "…[output truncated]\n";
const TEXT_NOTE = "…[truncated]";

/** The outcome parseRunOutcome makes of `value`; fails the test if it refuses it. */
function outcomeOf(value: unknown, maxBrowserMs = 60_000): RunOutcome {
  const parsed: ParsedOutcome = parseRunOutcome(value, maxBrowserMs);
  if (!parsed.ok) throw new Error(`expected an outcome, got the problem: ${parsed.problem}`);
  return parsed.outcome;
}

/** The problem parseRunOutcome reports for `value`; fails the test if it parses. */
function problemOf(value: unknown, maxBrowserMs = 60_000): string {
  const parsed = parseRunOutcome(value, maxBrowserMs);
  if (parsed.ok) throw new Error(`expected a refusal, got ${JSON.stringify(parsed.outcome).slice(0, 200)}`);
  return parsed.problem;
}

const succeeded = (fields: Record<string, unknown> = {}) => ({
  status: "succeeded",
  result_json: '{"title":"Example"}',
  logs: "hello\n",
  browser_ms: 120,
  ...fields,
});

const failed = (error: Record<string, unknown> = {}, fields: Record<string, unknown> = {}) => ({
  status: "failed",
  error: { code: "function_error", message: "boom", ...error },
  logs: "",
  browser_ms: 5,
  ...fields,
});

const INTRUDERS = {
  pk: "ACCOUNT#victim",
  sk: "RUN#01J",
  account_id: "victim",
  duration_ms: 1,
  peak_memory_mb: 1,
  status_code: 200,
  __proto_like: { admin: true },
};

describe("parseRunOutcome: named fields only", () => {
  it("parses a succeeded outcome to exactly its four fields", () => {
    expect(outcomeOf(succeeded(INTRUDERS))).toStrictEqual({
      status: "succeeded",
      result_json: '{"title":"Example"}',
      logs: "hello\n",
      browser_ms: 120,
    });
  });

  it("parses a failed outcome to exactly its four fields, and the error to code, message and stack", () => {
    const value = failed({ stack: "Error: boom\n    at run", ...INTRUDERS }, { result_json: '"sneaked"', ...INTRUDERS });
    expect(outcomeOf(value)).toStrictEqual({
      status: "failed",
      error: { code: "function_error", message: "boom", stack: "Error: boom\n    at run" },
      logs: "",
      browser_ms: 5,
    });
  });

  it("leaves out a stack that was not sent", () => {
    const outcome = outcomeOf(failed());
    expect(outcome).toStrictEqual({ status: "failed", error: { code: "function_error", message: "boom" }, logs: "", browser_ms: 5 });
    expect(outcome.status === "failed" && "stack" in outcome.error).toBe(false);
  });

  it.each([[null], [undefined], ["succeeded"], [42], [[]], [{}]])("refuses %j", (value) => {
    expect(problemOf(value)).toMatch(/^the run's outcome is malformed: /);
  });

  it.each([["running"], ["timed_out"], ["crashed"], ["SUCCEEDED"], [""], [null]])("refuses status %j", (status) => {
    expect(problemOf(succeeded({ status }))).toMatch(/^the run's outcome is malformed: /);
    expect(problemOf(failed({}, { status }))).toMatch(/^the run's outcome is malformed: /);
  });

  it("refuses an outcome with a field missing or of the wrong type", () => {
    const { logs: _logs, ...noLogs } = succeeded();
    const { result_json: _result, ...noResult } = succeeded();
    const { browser_ms: _ms, ...noBrowserMs } = succeeded();
    for (const value of [
      noLogs,
      noResult,
      noBrowserMs,
      succeeded({ result_json: { title: "x" } }),
      succeeded({ logs: ["a"] }),
      succeeded({ browser_ms: "120" }),
      failed({ message: 42 }),
      failed({ stack: ["at x"] }),
      { status: "failed", logs: "", browser_ms: 0 },
    ]) {
      expect(problemOf(value)).toMatch(/^the run's outcome is malformed: /);
    }
  });
});

describe("parseRunOutcome: error codes a run may report", () => {
  it.each([["function_error"], ["result_not_serializable"], ["result_too_large"], ["function_timeout"]])("accepts %s", (code) => {
    expect(outcomeOf(failed({ code }))).toStrictEqual({ status: "failed", error: { code, message: "boom" }, logs: "", browser_ms: 5 });
  });

  it.each([["function_crashed"], ["internal_error"], ["timeout"], ["quota_exceeded"], ["not_found"], [""], [null], [1]])(
    "refuses %j: a run cannot claim a service error",
    (code) => {
      expect(problemOf(failed({ code }))).toMatch(/^the run's outcome is malformed: /);
    },
  );
});

describe("parseRunOutcome: browser_ms", () => {
  it("rounds it", () => {
    expect(outcomeOf(succeeded({ browser_ms: 12.4 })).browser_ms).toBe(12);
    expect(outcomeOf(succeeded({ browser_ms: 12.5 })).browser_ms).toBe(13);
    expect(outcomeOf(succeeded({ browser_ms: 0 })).browser_ms).toBe(0);
  });

  it("caps it at maxBrowserMs, rounded, and at 0 when maxBrowserMs is negative", () => {
    expect(outcomeOf(succeeded({ browser_ms: 5000 }), 1000).browser_ms).toBe(1000);
    expect(outcomeOf(succeeded({ browser_ms: 5000 }), 999.6).browser_ms).toBe(1000);
    expect(outcomeOf(succeeded({ browser_ms: 999 }), 1000).browser_ms).toBe(999);
    expect(outcomeOf(failed({}, { browser_ms: 1e12 }), 30_000).browser_ms).toBe(30_000);
    expect(outcomeOf(succeeded({ browser_ms: 10 }), -5).browser_ms).toBe(0);
  });

  it.each([[-1], [-0.6], [Number.NaN], [Number.POSITIVE_INFINITY], [Number.NEGATIVE_INFINITY], [null], ["5"]])("refuses %p", (browser_ms) => {
    expect(problemOf(succeeded({ browser_ms }))).toMatch(/^the run's outcome is malformed: /);
  });
});

describe("parseRunOutcome: result_json", () => {
  it.each([["null"], ["0"], ['"text"'], ["[]"], ['{"a":[1,{"b":null}]}'], [" 1 "]])("accepts JSON text %j as sent", (result_json) => {
    expect(outcomeOf(succeeded({ result_json }))).toStrictEqual({ status: "succeeded", result_json, logs: "hello\n", browser_ms: 120 });
  });

  it.each([[""], ["undefined"], ["{"], ["{'a':1}"], ["NaN"], ['{"a":1} trailing']])("refuses %j, which is not JSON text", (result_json) => {
    expect(problemOf(succeeded({ result_json }))).toBe("the run's result is not JSON text");
  });

  it("turns a result over MAX_RESULT_BYTES, counted in UTF-8 bytes, into a result_too_large failure", () => {
    // 2.1 M characters: well under the limit in UTF-16 code units, ~6.3 MB in UTF-8.
    const result_json = JSON.stringify("€".repeat(2_100_000));
    const bytes = Buffer.byteLength(result_json, "utf8");
    expect(result_json.length).toBeLessThan(MAX_RESULT_BYTES);
    expect(bytes).toBeGreaterThan(MAX_RESULT_BYTES);
    expect(outcomeOf(succeeded({ result_json, logs: "kept", browser_ms: 7 }))).toStrictEqual({
      status: "failed",
      error: resultTooLarge(bytes),
      logs: "kept",
      browser_ms: 7,
    });
    expect(resultTooLarge(bytes)).toEqual({ code: "result_too_large", message: expect.stringContaining("6.0 MB of JSON") });
  });

  it("keeps a result of exactly MAX_RESULT_BYTES and refuses one byte more", () => {
    const exact = JSON.stringify("a".repeat(MAX_RESULT_BYTES - 2));
    expect(Buffer.byteLength(exact, "utf8")).toBe(MAX_RESULT_BYTES);
    expect(outcomeOf(succeeded({ result_json: exact }))).toMatchObject({ status: "succeeded", result_json: exact });

    const over = JSON.stringify("a".repeat(MAX_RESULT_BYTES - 1));
    const outcome = outcomeOf(succeeded({ result_json: over }));
    expect(outcome.status === "failed" && outcome.error.code).toBe("result_too_large");
    expect("result_json" in outcome).toBe(false);
  });
});

describe("parseRunOutcome: logs", () => {
  it("keeps logs within MAX_LOG_BYTES as sent", () => {
    const logs = "é".repeat(MAX_LOG_BYTES / 2);
    expect(Buffer.byteLength(logs, "utf8")).toBe(MAX_LOG_BYTES);
    expect(outcomeOf(succeeded({ logs })).logs).toBe(logs);
  });

  it.each([
    ["ASCII", "a".repeat(MAX_LOG_BYTES + 1)],
    ["2-byte", "é".repeat(MAX_LOG_BYTES)],
    ["3-byte", "€".repeat(MAX_LOG_BYTES)],
    ["mixed", "a€é".repeat(MAX_LOG_BYTES)],
  ])("cuts %s logs over MAX_LOG_BYTES to at most MAX_LOG_BYTES UTF-8 bytes, ending with the note", (_kind, logs) => {
    for (const outcome of [outcomeOf(succeeded({ logs })), outcomeOf(failed({}, { logs }))]) {
      expect(Buffer.byteLength(outcome.logs, "utf8")).toBeLessThanOrEqual(MAX_LOG_BYTES);
      expect(outcome.logs.endsWith(LOG_NOTE)).toBe(true);
      expect(logs.startsWith(outcome.logs.slice(0, -LOG_NOTE.length))).toBe(true);
      expect(Buffer.from(outcome.logs, "utf8").toString("utf8")).toBe(outcome.logs);
    }
  });

  it("cuts logs of 4-byte characters between characters, never leaving half a surrogate pair", () => {
    // 16474 emoji (65896 bytes): the cut lands on an odd UTF-16 index.
    const logs = "😀".repeat(16_474);
    const kept = outcomeOf(succeeded({ logs })).logs;
    expect(Buffer.byteLength(kept, "utf8")).toBeLessThanOrEqual(MAX_LOG_BYTES);
    expect(kept.endsWith(LOG_NOTE)).toBe(true);
    const body = kept.slice(0, -LOG_NOTE.length);
    // Checked as booleans so a failure prints a line, not 64 KB of emoji.
    expect(/[\uD800-\uDBFF]$/.test(body)).toBe(false);
    expect(/^(?:😀)*$/u.test(body)).toBe(true);
    expect(Buffer.from(kept, "utf8").toString("utf8") === kept).toBe(true);
  });
});

describe("parseRunOutcome: error message and stack", () => {
  it("keeps a message of 4096 characters and cuts a longer one to 4096 plus the note", () => {
    const exact = "m".repeat(4096);
    expect(outcomeOf(failed({ message: exact }))).toMatchObject({ error: { message: exact } });
    const long = "€".repeat(50_000);
    expect(outcomeOf(failed({ message: long }))).toMatchObject({ error: { message: `${"€".repeat(4096)}${TEXT_NOTE}` } });
  });

  it("keeps a stack of 16384 characters and cuts a longer one to 16384 plus the note", () => {
    const exact = "s".repeat(16_384);
    expect(outcomeOf(failed({ stack: exact }))).toMatchObject({ error: { stack: exact } });
    const long = "at f (x.js:1:1)\n".repeat(10_000);
    expect(outcomeOf(failed({ stack: long }))).toMatchObject({ error: { stack: `${long.slice(0, 16_384)}${TEXT_NOTE}` } });
  });
});
