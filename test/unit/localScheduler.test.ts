import type { FunctionItem } from "../../lambdas/functions/types";
import { LocalScheduler } from "../../lambdas/schedule/localScheduler";
import type { Store } from "../../lambdas/store/store";
import { FakeClock } from "../helpers/fakeClock";
import { startMemoryStore } from "../helpers/memoryStore";
import { functionItem } from "../helpers/records";

let store: Store;
let closeStore: () => Promise<void>;
beforeAll(async () => {
  ({ store, close: closeStore } = await startMemoryStore());
});
afterAll(() => closeStore());

let counter = 0;
function scheduled(schedule: string, timezone = "UTC", updatedAt = "2020-01-01T00:00:00.000Z"): FunctionItem {
  counter++;
  return functionItem({
    function_id: `fn_${String(counter).padStart(26, "0")}`,
    name: `f${counter}`,
    schedule,
    schedule_timezone: timezone,
    timeout_seconds: 60,
    memory_mb: 256,
    created_at: updatedAt,
    updated_at: updatedAt,
    code_sha256: "x",
  });
}

/** Firing times of one schedule between two instants, as the scheduler fires them. */
async function firings(schedule: string, timezone: string, from: string, to: string): Promise<string[]> {
  const clock = new FakeClock(from);
  const fired: string[] = [];
  const scheduler = new LocalScheduler({
    store,
    clock,
    timers: clock,
    log: (line) => fired.push(`log: ${line}`),
    fire: async (_id, at) => fired.push(at),
  });
  await scheduler.sync(scheduled(schedule, timezone));
  await clock.advanceTo(to);
  await scheduler.close();
  return fired;
}

describe("the local scheduler's timing (injected clock)", () => {
  it.each([
    ["every 15 minutes", "*/15 * * * *", "UTC", "2026-05-01T10:07:00Z", "2026-05-01T11:00:00Z",
      ["2026-05-01T10:15:00.000Z", "2026-05-01T10:30:00.000Z", "2026-05-01T10:45:00.000Z", "2026-05-01T11:00:00.000Z"]],
    ["hourly", "@hourly", "UTC", "2026-05-01T10:07:00Z", "2026-05-01T13:00:00Z",
      ["2026-05-01T11:00:00.000Z", "2026-05-01T12:00:00.000Z", "2026-05-01T13:00:00.000Z"]],
    ["daily at 9 in New York", "0 9 * * *", "America/New_York", "2026-05-01T00:00:00Z", "2026-05-03T23:00:00Z",
      ["2026-05-01T13:00:00.000Z", "2026-05-02T13:00:00.000Z", "2026-05-03T13:00:00.000Z"]],
    ["weekly on Monday 08:30 Berlin", "30 8 * * MON", "Europe/Berlin", "2026-05-01T00:00:00Z", "2026-05-20T00:00:00Z",
      ["2026-05-04T06:30:00.000Z", "2026-05-11T06:30:00.000Z", "2026-05-18T06:30:00.000Z"]],
    ["monthly on the first", "@monthly", "UTC", "2026-01-15T00:00:00Z", "2026-04-15T00:00:00Z",
      ["2026-02-01T00:00:00.000Z", "2026-03-01T00:00:00.000Z", "2026-04-01T00:00:00.000Z"]],
    ["day-of-month OR day-of-week", "0 12 13 * FRI", "UTC", "2026-02-08T00:00:00Z", "2026-02-21T00:00:00Z",
      ["2026-02-13T12:00:00.000Z", "2026-02-20T12:00:00.000Z"]],
    ["Tokyo midnight", "0 0 * * *", "Asia/Tokyo", "2026-05-01T00:00:00Z", "2026-05-02T16:00:00Z",
      ["2026-05-01T15:00:00.000Z", "2026-05-02T15:00:00.000Z"]],
  ])("%s", async (_name, schedule, timezone, from, to, expected) => {
    expect(await firings(schedule as string, timezone as string, from as string, to as string)).toEqual(expected);
  });

  it("Berlin spring forward: 02:30 does not exist on 29 March, so it runs once right after the gap", async () => {
    expect(await firings("30 2 * * *", "Europe/Berlin", "2026-03-27T12:00:00Z", "2026-03-30T12:00:00Z")).toEqual([
      "2026-03-28T01:30:00.000Z", // 02:30 CET
      "2026-03-29T01:00:00.000Z", // 03:00 CEST, right after the gap
      "2026-03-30T00:30:00.000Z", // 02:30 CEST
    ]);
  });

  it("Berlin fall back: 02:30 happens twice on 25 October and runs once", async () => {
    expect(await firings("30 2 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z", "2026-10-26T12:00:00Z")).toEqual([
      "2026-10-25T00:30:00.000Z", // the first 02:30 (CEST)
      "2026-10-26T01:30:00.000Z",
    ]);
  });

  it("New York spring forward and fall back", async () => {
    expect(await firings("30 2 * * *", "America/New_York", "2026-03-07T12:00:00Z", "2026-03-09T12:00:00Z")).toEqual([
      "2026-03-08T07:00:00.000Z", // 03:00 EDT, right after the gap
      "2026-03-09T06:30:00.000Z",
    ]);
    expect(await firings("30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z", "2026-11-02T12:00:00Z")).toEqual([
      "2026-11-01T05:30:00.000Z", // the first 01:30 (EDT) only
      "2026-11-02T06:30:00.000Z",
    ]);
    // A wildcard-hour schedule follows real time through the repeated hour.
    expect(await firings("0 * * * *", "America/New_York", "2026-11-01T04:30:00Z", "2026-11-01T07:30:00Z")).toEqual([
      "2026-11-01T05:00:00.000Z", // 01:00 EDT
      "2026-11-01T06:00:00.000Z", // 01:00 EST
      "2026-11-01T07:00:00.000Z",
    ]);
  });

  it("stops firing at once when the schedule is removed or changed", async () => {
    const clock = new FakeClock("2026-05-01T10:00:30Z");
    const fired: string[] = [];
    const scheduler = new LocalScheduler({ store, clock, timers: clock, log: () => undefined, fire: async (_id, at) => fired.push(at) });
    const fn = scheduled("* * * * *");
    await scheduler.sync(fn);
    await clock.advanceTo("2026-05-01T10:02:30Z");
    expect(fired).toEqual(["2026-05-01T10:01:00.000Z", "2026-05-01T10:02:00.000Z"]);
    await scheduler.sync({ ...fn, schedule: "0 * * * *" });
    await clock.advanceTo("2026-05-01T11:00:30Z");
    expect(fired.slice(2)).toEqual(["2026-05-01T11:00:00.000Z"]);
    await scheduler.remove(fn);
    await clock.advanceTo("2026-05-01T14:00:00Z");
    expect(fired).toHaveLength(3);
    expect(scheduler.scheduled).toEqual([]);
    await scheduler.close();
  });

  it("after downtime runs the latest missed firing once, then resumes", async () => {
    const fn = scheduled("*/10 * * * *", "UTC", "2026-05-01T08:00:00.000Z");
    expect(await store.functions.create(fn)).toBe(true);
    expect(await store.schedules.claim(fn.function_id, "2026-05-01T09:00:00.000Z")).toBe(true);
    // The service was down from 09:05 to 09:47: 09:10 … 09:40 were missed.
    const clock = new FakeClock("2026-05-01T09:47:00Z");
    const fired: string[] = [];
    const scheduler = new LocalScheduler({ store, clock, timers: clock, log: () => undefined, fire: async (_id, at) => fired.push(at) });
    await scheduler.start();
    expect(fired).toEqual(["2026-05-01T09:40:00.000Z"]);
    await clock.advanceTo("2026-05-01T10:05:00Z");
    expect(fired).toEqual(["2026-05-01T09:40:00.000Z", "2026-05-01T09:50:00.000Z", "2026-05-01T10:00:00.000Z"]);
    await scheduler.close();

    // Nothing missed: a restart fires nothing early.
    await store.schedules.claim(fn.function_id, "2026-05-01T10:00:00.000Z");
    const again: string[] = [];
    const restarted = new LocalScheduler({ store, clock, timers: clock, log: () => undefined, fire: async (_id, at) => again.push(at) });
    await restarted.start();
    expect(again).toEqual([]);
    await restarted.close();
  });
});

describe("expressions croner would not take as written", () => {
  it("fires `a/n` steps and @midnight as parseCron defines them", async () => {
    expect(await firings("50/4 * * * *", "UTC", "2026-05-01T10:00:00Z", "2026-05-01T11:00:00Z")).toEqual([
      "2026-05-01T10:50:00.000Z",
      "2026-05-01T10:54:00.000Z",
      "2026-05-01T10:58:00.000Z",
    ]);
    expect(await firings("@midnight", "UTC", "2026-05-01T10:00:00Z", "2026-05-02T10:00:00Z")).toEqual(["2026-05-02T00:00:00.000Z"]);
  });
});
