import { compileCode } from "../../lambdas/code/compileCode";
import { toRecord } from "../../lambdas/functions/toRecord";
import { ApiError } from "../../lambdas/http/errors";
import { finishedResponse } from "../../lambdas/invoke/invokeResponse";
import { nextEvents, START } from "../../lambdas/runs/runEvents";
import { MAX_STACK_CHARS, toLogEntry, toRunView } from "../../lambdas/runs/toRunView";
import { FunctionRecord } from "../../lambdas/schemas/functionSchemas";
import { functionItem, runItem } from "../helpers/records";

const fn = functionItem();
const STACK = "Error: boom\n    at verify (automation.ts:10:11)\n    at run (automation.ts:19:3)";
// A run error as the store keeps it once it carries the stack of the user's code.
const failedWithStack = { code: "function_error", message: "boom", stack: STACK };

function thrownBy(action: () => unknown): ApiError {
  try {
    action();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error("expected an ApiError");
}

describe("the stack of a failed run in the API", () => {
  it("is in the 500 function_error body's details, with the run_id", () => {
    const error = thrownBy(() => finishedResponse(runItem(fn, { status: "failed", error: failedWithStack, duration_ms: 12 })));
    expect(error.status).toBe(500);
    expect(error.code).toBe("function_error");
    expect(error.message).toBe("boom");
    expect(error.details).toEqual({ run_id: "run_1", status: "failed", stack: STACK });
    // A run that kept no stack has none in its details.
    const without = thrownBy(() => finishedResponse(runItem(fn, { status: "failed", error: { code: "result_not_serializable", message: "no" } })));
    expect(without.details).toEqual({ run_id: "run_1", status: "failed" });
  });

  it("is in GET /runs/{id}, and cut to MAX_STACK_CHARS wherever it came from", () => {
    expect(toRunView(runItem(fn, { status: "failed", error: failedWithStack })).error).toEqual(failedWithStack);
    const long = { ...failedWithStack, stack: "x".repeat(MAX_STACK_CHARS + 100) };
    const shown = toRunView(runItem(fn, { status: "failed", error: long })).error;
    expect(shown?.stack).toBe(`${"x".repeat(MAX_STACK_CHARS)}…[truncated]`);
    const details = thrownBy(() => finishedResponse(runItem(fn, { status: "failed", error: long }))).details;
    expect(details.stack).toBe(shown?.stack);
  });

  it("is left out of the entries of the logs list (code and message only)", () => {
    expect(toLogEntry(runItem(fn, { status: "failed", error: failedWithStack })).error).toEqual({ code: "function_error", message: "boom" });
    expect(toLogEntry(runItem(fn, { status: "succeeded" })).error).toBeNull();
  });
});

describe("the warnings of a function record", () => {
  const trap = `import { Session } from "browserfn/runtime";
export default async function run() {
  await using session = await Session.start();
  const page = await session.newPage();
  return page.title();
}`;

  it("are the stored latest version's, [] when none (or stored before warnings were kept), and fit the record's schema", () => {
    const { warnings } = compileCode(trap);
    const record = toRecord({ ...fn, warnings }, "http://x");
    expect(record.warnings).toEqual([
      {
        code: "unawaited_return_in_session",
        message:
          "line 5: `return page.title()` returns a promise while `await using session` closes the session at the return: " +
          "write `return await page.title()`",
        line: 5,
      },
    ]);
    expect(FunctionRecord.parse(record)).toEqual(record);
    // A copy: the answer shares no object with the stored record.
    expect(record.warnings?.[0]).not.toBe(warnings[0]);
    expect(toRecord({ ...fn, warnings: [] }, "http://x").warnings).toEqual([]);
    expect(toRecord({ ...fn, warnings: undefined }, "http://x").warnings).toEqual([]);
  });
});

describe("a run recorded with a result nested past the depth cap (before there was one)", () => {
  const deep = runItem(fn, { status: "succeeded", result_json: "[".repeat(100_000) + "]".repeat(100_000), finished_at: "2026-01-01T00:00:01.000Z", duration_ms: 5 });

  it("is shown failed, result_too_deep, without its result, and written out without recursing on it", () => {
    const view = toRunView(deep);
    expect(view).toMatchObject({ status: "failed", result: null, error: { code: "result_too_deep", message: expect.stringContaining("recorded before") } });
    expect(() => JSON.stringify(view)).not.toThrow();
    const { events } = nextEvents(deep, null, START);
    expect(events.at(-1)).toMatchObject({ id: "error", event: "error", data: { status: "failed", error: { code: "result_too_deep" } } });
  });

  it("answers an idempotent replay with 500 result_too_deep, not the deep text", () => {
    const error = thrownBy(() => finishedResponse(deep));
    expect([error.status, error.code]).toEqual([500, "result_too_deep"]);
  });

  it("keeps a result at the cap as it is", () => {
    const atCap = runItem(fn, { status: "succeeded", result_json: "[".repeat(64) + "]".repeat(64) });
    expect(toRunView(atCap)).toMatchObject({ status: "succeeded", error: null });
    expect(finishedResponse(atCap)).toMatchObject({ statusCode: 200, body: atCap.result_json });
  });
});
