import { clientAddress, createRefusalPacing } from "../../lambdas/local/requestGuards/refusalPacing";

describe("refusal pacing (401s per client address)", () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it("answers a burst at once, holds what comes past it, and refills with time; addresses apart", async () => {
    let now = 0;
    const pacing = createRefusalPacing({ perSecond: 2, burst: 2, holdMs: 1000 }, () => now);
    const settled = (promise: Promise<void>) => {
      let done = false;
      void promise.then(() => (done = true));
      return () => done;
    };
    await pacing.wait("1.2.3.4");
    await pacing.wait("1.2.3.4");
    const third = settled(pacing.wait("1.2.3.4"));
    await Promise.resolve();
    expect(third()).toBe(false);
    // Another address has its own bucket.
    await pacing.wait("5.6.7.8");
    jest.advanceTimersByTime(1000);
    await Promise.resolve();
    expect(third()).toBe(true);
    // Half a second later one token is back (2 a second).
    now = 500;
    await pacing.wait("1.2.3.4");
    const next = settled(pacing.wait("1.2.3.4"));
    await Promise.resolve();
    expect(next()).toBe(false);
    jest.advanceTimersByTime(1000);
    await Promise.resolve();
    expect(next()).toBe(true);
  });

  it("counts an IPv4-mapped IPv6 address as its IPv4 one", () => {
    expect(clientAddress("::ffff:127.0.0.1")).toBe("127.0.0.1");
    expect(clientAddress("::1")).toBe("::1");
    expect(clientAddress(undefined)).toBe("unknown");
  });
});
