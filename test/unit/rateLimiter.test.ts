import { ApiError } from "../../lambdas/http/errors";
import { createRateLimiter } from "../../lambdas/http/rateLimiter";
import { finishedResponse } from "../../lambdas/invoke/invokeResponse";

describe("the token bucket", () => {
  it("allows the burst, then refills at the rate, with Retry-After", () => {
    let now = 0;
    const limiter = createRateLimiter({ perSecond: 2, burst: 4 }, () => now);
    for (let i = 0; i < 4; i++) limiter.take("k");
    let refused: unknown;
    try {
      limiter.take("k");
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).headers["retry-after"]).toBe("1");
    now = 500; // one token back
    limiter.take("k");
    expect(() => limiter.take("k")).toThrow(ApiError);
    now = 10_000; // full again, never above the burst
    for (let i = 0; i < 4; i++) limiter.take("k");
    expect(() => limiter.take("k")).toThrow(ApiError);
    limiter.take("another key");
  });

  it("does nothing at a rate of 0", () => {
    const limiter = createRateLimiter({ perSecond: 0, burst: 1 });
    for (let i = 0; i < 100; i++) limiter.take("k");
  });
});

describe("a run refused after it was recorded", () => {
  it("answers the refusal's 429 with Retry-After, not a 500", () => {
    let thrown: unknown;
    try {
      finishedResponse({
        run_id: "run_x", version: 1, duration_ms: 0, status: "failed",
        error: { code: "concurrency_limit_exceeded", message: "throttled" },
      } as never);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ApiError);
    expect((thrown as ApiError).status).toBe(429);
    expect((thrown as ApiError).headers["retry-after"]).toBe("1");
    expect((thrown as ApiError).details).toEqual({ run_id: "run_x", status: "failed" });
  });
});
