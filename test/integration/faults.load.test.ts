import { runMixedLoad } from "../soak/mixedLoad";

// The soak (npm run test:soak) in short: 20 s of the same mixed traffic against a child-process service.
describe("a short burst of steady mixed traffic", () => {
  it("answers nothing but successes and planned 429s, ends every run and leaves no process", async () => {
    const report = await runMixedLoad({ durationMs: 20_000, ratePerSecond: 6, plannedRefusalEverySeconds: 7, warmupMs: 5_000, syncWaitSeconds: 8 });
    expect(report.unexpected).toEqual([]);
    expect(report.skipped).toBe(0);
    expect(report.planned_429s).toBeGreaterThanOrEqual(1);
    expect(report.operations).toBeGreaterThan(100);
    expect(report.runs_not_final).toBe(0);
    expect(report.processes.left_after_stop).toBe(0);
    expect(report.service_exit_code).toBe(0);
  }, 90_000);
});
