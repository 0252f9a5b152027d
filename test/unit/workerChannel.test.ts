import { parseFrame } from "../../lambdas/runtime/local/workerChannel";

/** The problem parseFrame reports for `value`; fails the test if it parses. */
function problemOf(value: unknown): string {
  const parsed = parseFrame(value);
  if (parsed.ok) throw new Error(`expected ${JSON.stringify(value)} to be refused, got ${JSON.stringify(parsed.frame)}`);
  return parsed.problem;
}

describe("parseFrame: known messages", () => {
  it.each([
    [{ type: "ready" }],
    [{ type: "init_failed", message: "SyntaxError: Unexpected token" }],
    [{ type: "done", runId: "01J0RUN", outcome: { status: "succeeded", result_json: "1", logs: "", browser_ms: 0 } }],
    [{ type: "idle", runId: "01J0RUN", leftover: [] }],
    [{ type: "idle", runId: "01J0RUN", leftover: ["Timeout", "TCPSocketWrap"] }],
    [{ type: "worker_exit", code: 1, signal: null }],
    [{ type: "worker_exit", code: null, signal: "SIGKILL" }],
    [{ type: "oversize", bytes: 7_000_000 }],
  ])("parses %j to the same message", (frame) => {
    expect(parseFrame(frame)).toStrictEqual({ ok: true, frame });
  });

  it("passes a done frame's outcome on as sent (parseRunOutcome parses it), but keeps only the named fields of the frame", () => {
    const outcome = { status: "succeeded", result_json: "{}", logs: "", browser_ms: 3, pk: "ACCOUNT#other" };
    const parsed = parseFrame({ type: "done", runId: "r1", outcome, pk: "ACCOUNT#victim", sk: "RUN#x", admin: true });
    expect(parsed).toStrictEqual({ ok: true, frame: { type: "done", runId: "r1", outcome } });
  });

  it("drops extra properties from every kind of frame", () => {
    const extra = { pk: "ACCOUNT#victim", sk: "FN#x", admin: true };
    expect(parseFrame({ type: "ready", ...extra })).toStrictEqual({ ok: true, frame: { type: "ready" } });
    expect(parseFrame({ type: "init_failed", message: "m", ...extra })).toStrictEqual({
      ok: true,
      frame: { type: "init_failed", message: "m" },
    });
    expect(parseFrame({ type: "idle", runId: "r", leftover: ["Timeout"], ...extra })).toStrictEqual({
      ok: true,
      frame: { type: "idle", runId: "r", leftover: ["Timeout"] },
    });
    expect(parseFrame({ type: "worker_exit", code: 0, signal: null, ...extra })).toStrictEqual({
      ok: true,
      frame: { type: "worker_exit", code: 0, signal: null },
    });
    expect(parseFrame({ type: "oversize", bytes: 10, ...extra })).toStrictEqual({ ok: true, frame: { type: "oversize", bytes: 10 } });
  });
});

describe("parseFrame: caps", () => {
  it("cuts an init_failed message to 4096 characters", () => {
    const parsed = parseFrame({ type: "init_failed", message: "e".repeat(10_000) });
    expect(parsed).toStrictEqual({ ok: true, frame: { type: "init_failed", message: "e".repeat(4096) } });
  });

  it("cuts each leftover entry to 100 characters and takes up to 64 entries", () => {
    const leftover = Array.from({ length: 64 }, (_, i) => `${i}`.padEnd(500, "h"));
    const parsed = parseFrame({ type: "idle", runId: "r", leftover });
    expect(parsed).toStrictEqual({
      ok: true,
      frame: { type: "idle", runId: "r", leftover: leftover.map((entry) => entry.slice(0, 100)) },
    });
  });

  it("refuses more than 64 leftover entries", () => {
    const leftover = Array.from({ length: 65 }, () => "Timeout");
    expect(problemOf({ type: "idle", runId: "r", leftover })).toMatch(/^an unexpected message \(idle\): /);
  });

  it("cuts a worker_exit signal to 32 characters", () => {
    expect(parseFrame({ type: "worker_exit", code: null, signal: "S".repeat(100) })).toStrictEqual({
      ok: true,
      frame: { type: "worker_exit", code: null, signal: "S".repeat(32) },
    });
  });

  it("refuses a runId over 64 characters, and takes one of exactly 64", () => {
    expect(problemOf({ type: "done", runId: "r".repeat(65), outcome: {} })).toMatch(/^an unexpected message \(done\): /);
    expect(problemOf({ type: "idle", runId: "r".repeat(65), leftover: [] })).toMatch(/^an unexpected message \(idle\): /);
    expect(parseFrame({ type: "idle", runId: "r".repeat(64), leftover: [] }).ok).toBe(true);
  });
});

describe("parseFrame: refusals name the type", () => {
  it("refuses an unknown type", () => {
    expect(problemOf({ type: "browser_request" })).toMatch(/^an unexpected message \(browser_request\): /);
    expect(problemOf({ type: "put_item", pk: "ACCOUNT#x" })).toMatch(/^an unexpected message \(put_item\): /);
  });

  it.each([
    ["init_failed", { type: "init_failed" }],
    ["done", { type: "done", outcome: {} }],
    ["idle", { type: "idle", runId: "r" }],
    ["idle", { type: "idle", leftover: [] }],
    ["worker_exit", { type: "worker_exit", code: 0 }],
    ["worker_exit", { type: "worker_exit", signal: null }],
    ["oversize", { type: "oversize" }],
  ])("refuses %s with a field missing: %j", (type, frame) => {
    expect(problemOf(frame)).toMatch(new RegExp(`^an unexpected message \\(${type}\\): `));
  });

  it.each([
    ["init_failed", { type: "init_failed", message: 42 }],
    ["init_failed", { type: "init_failed", message: null }],
    ["done", { type: "done", runId: 7, outcome: {} }],
    ["idle", { type: "idle", runId: "r", leftover: "Timeout" }],
    ["idle", { type: "idle", runId: "r", leftover: [1, 2] }],
    ["worker_exit", { type: "worker_exit", code: 1.5, signal: null }],
    ["worker_exit", { type: "worker_exit", code: "1", signal: null }],
    ["worker_exit", { type: "worker_exit", code: 0, signal: 9 }],
    ["oversize", { type: "oversize", bytes: "7000000" }],
    ["oversize", { type: "oversize", bytes: -1 }],
  ])("refuses %s with a field of the wrong type: %j", (type, frame) => {
    expect(problemOf(frame)).toMatch(new RegExp(`^an unexpected message \\(${type}\\): `));
  });

  it.each([[null], [undefined], [42], ["ready"], [[]], [[{ type: "ready" }]], [{}], [{ type: 5 }], [{ type: null }]])(
    "refuses %j, which has no type, as (?)",
    (value) => {
      expect(problemOf(value)).toMatch(/^an unexpected message \(\?\): /);
    },
  );

  it("cuts a long type name in the problem to 40 characters", () => {
    const problem = problemOf({ type: "x".repeat(10_000) });
    expect(problem).toMatch(new RegExp(`^an unexpected message \\(${"x".repeat(40)}\\): `));
    expect(problem.length).toBeLessThan(200);
  });
});
