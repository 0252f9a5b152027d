import { outcomeEnding } from "../../lambdas/runtime/aws/invokeOutcome";

const BOUNDS = { maxBrowserMs: 60_000, memoryMb: 1024 };

describe("outcomeEnding", () => {
  it("ends a run the runner stopped at its deadline (function_timeout) as timed_out, with its logs, browser time and memory", () => {
    const answer = {
      status: "failed",
      error: { code: "function_timeout", message: "The function did not finish within its timeout of 60 s", stack: "at run" },
      logs: "LOG before the hang\n",
      browser_ms: 59_000,
      peak_memory_mb: 512,
    };
    expect(outcomeEnding(JSON.stringify(answer), BOUNDS)).toStrictEqual({
      status: "timed_out",
      result_json: null,
      error: { code: "function_timeout", message: "The function did not finish within its timeout of 60 s" },
      logs: "LOG before the hang\n",
      browser_ms: 59_000,
      peak_memory_mb: 512,
    });
  });

  it.each([["function_error"], ["result_not_serializable"], ["result_too_large"]])("keeps a %s failure failed", (code) => {
    const answer = { status: "failed", error: { code, message: "boom" }, logs: "", browser_ms: 5 };
    expect(outcomeEnding(JSON.stringify(answer), BOUNDS)).toStrictEqual({
      status: "failed",
      result_json: null,
      error: { code, message: "boom" },
      logs: "",
      browser_ms: 5,
      peak_memory_mb: null,
    });
  });

  it("keeps a success succeeded", () => {
    const answer = { status: "succeeded", result_json: "[1]", logs: "LOG x\n", browser_ms: 7, peak_memory_mb: 4096 };
    expect(outcomeEnding(JSON.stringify(answer), BOUNDS)).toStrictEqual({
      status: "succeeded",
      result_json: "[1]",
      error: null,
      logs: "LOG x\n",
      browser_ms: 7,
      peak_memory_mb: 1024,
    });
  });
});
