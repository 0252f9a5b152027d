import { settleDeadline } from "../../lambdas/invoke/claimOrReplay";

// How long a duplicate of an Idempotency-Key request waits for the first request's start to
// settle before it answers 503 (claimOrReplay).

describe("settleDeadline", () => {
  const started = 1_000_000;

  it("waits a second past the window when the handler has time for it", () => {
    expect(settleDeadline({ started, syncMs: 25_000, respondAsync: false }, started + 29_000)).toBe(started + 26_000);
    expect(settleDeadline({ started, syncMs: 25_000, respondAsync: false }, Infinity)).toBe(started + 26_000);
  });

  it("never waits into the handler's last half second (AWS: a 28 s window against the Lambda's 29 s)", () => {
    expect(settleDeadline({ started, syncMs: 28_000, respondAsync: false }, started + 28_900)).toBe(started + 28_400);
    expect(settleDeadline({ started, syncMs: 28_000, respondAsync: true }, started + 700)).toBe(started + 200);
  });

  it("waits about a second with Prefer: respond-async, whatever the window", () => {
    expect(settleDeadline({ started, syncMs: 25_000, respondAsync: true }, started + 29_000)).toBe(started + 1000);
    expect(settleDeadline({ started, syncMs: 500, respondAsync: true }, Infinity)).toBe(started + 500);
  });
});
