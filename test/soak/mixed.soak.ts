import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { runMixedLoad } from "./mixedLoad";

/** SOAK_MINUTES (default 10) of steady mixed traffic; SOAK_RATE operations a second (default 8). */
const minutes = Number(process.env.SOAK_MINUTES ?? 10);
const rate = Number(process.env.SOAK_RATE ?? 8);

describe(`soak: ${minutes} minutes of mixed traffic at ${rate} operations a second`, () => {
  it("answers nothing but successes and planned 429s, keeps the service's memory flat and leaves no process", async () => {
    const report = await runMixedLoad({
      durationMs: minutes * 60_000,
      ratePerSecond: rate,
      plannedRefusalEverySeconds: 40,
      warmupMs: Math.min(60_000, minutes * 60_000 * 0.2),
      log: (line) => process.stdout.write(`${line}\n`),
    });
    const file = path.join(tmpdir(), "browserfn-soak-report.json");
    await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
    process.stdout.write(`soak report (also in ${file}):\n${JSON.stringify(report, null, 2)}\n`);

    expect(report.unexpected).toEqual([]);
    expect(report.skipped).toBe(0);
    expect(report.planned_429s).toBeGreaterThanOrEqual(1);
    expect(report.runs_not_final).toBe(0);
    expect(report.processes.left_after_stop).toBe(0);
    expect(report.service_exit_code).toBe(0);
    // Flat: the service ends within 50% (+64 MB of slack for the heap's own rhythm) of where it stood after warm-up.
    expect(report.rss_mb.service_end).toBeLessThan(report.rss_mb.service_start * 1.5 + 64);
  }, (minutes + 5) * 60_000);
});
