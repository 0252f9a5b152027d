import { lambdaContext, localHandlerTimeoutMs } from "../../lambdas/local/lambdaContext";

describe("a local handler's time limit", () => {
  it("is an API Lambda's 30 s, or the sync window and 5 s to answer in when the window is longer", () => {
    expect(localHandlerTimeoutMs(25)).toBe(30_000);
    expect(localHandlerTimeoutMs(1)).toBe(30_000);
    expect(localHandlerTimeoutMs(60)).toBe(65_000);
    expect(localHandlerTimeoutMs(900)).toBe(905_000);
  });

  it("is what the handler's context counts down from", () => {
    const remaining = lambdaContext("invokePost", "r1", localHandlerTimeoutMs(120)).getRemainingTimeInMillis();
    expect(remaining).toBeGreaterThan(124_000);
    expect(remaining).toBeLessThanOrEqual(125_000);
  });
});
