import { nextRunAt } from "../../lambdas/functions/schedule";
import type { ApiError } from "../../lambdas/http/errors";
import { thrownApiError } from "../helpers/apiErrors";
import { cronForCroner, parseCron, type CronField } from "../../lambdas/schedule/parseCron";

const rejection = (schedule: string): ApiError => thrownApiError(() => parseCron(schedule), `'${schedule}' was accepted`);

const range = (from: number, to: number, step = 1) => Array.from({ length: Math.floor((to - from) / step) + 1 }, (_, i) => from + i * step);
const values = (schedule: string, field: "minute" | "hour" | "dayOfMonth" | "month" | "dayOfWeek") => parseCron(schedule)[field].values;

describe("parseCron", () => {
  it("returns each field's text, star flag, sorted values and parts", () => {
    const fields = parseCron("  */15 9-17 1,15 JAN-mar\tmon-fri ");
    expect(fields.expression).toBe("*/15 9-17 1,15 JAN-mar mon-fri");
    expect(fields.minute).toEqual<CronField>({
      name: "minute",
      text: "*/15",
      star: false,
      values: [0, 15, 30, 45],
      parts: [{ text: "*/15", start: 0, end: 59, step: 15 }],
      min: 0,
      max: 59,
    });
    expect(fields.hour.values).toEqual(range(9, 17));
    expect(fields.dayOfMonth.values).toEqual([1, 15]);
    expect(fields.month.values).toEqual([1, 2, 3]);
    expect(fields.dayOfWeek.values).toEqual([1, 2, 3, 4, 5]);
    const all = parseCron("* * * * *");
    expect([all.minute, all.hour, all.dayOfMonth, all.month, all.dayOfWeek].map((f) => f.star)).toEqual([true, true, true, true, true]);
    expect(all.minute.values).toEqual(range(0, 59));
    expect(all.dayOfMonth.values).toEqual(range(1, 31));
    expect(all.dayOfWeek.values).toEqual(range(0, 6));
  });

  it("reads numbers, names, ranges, steps and lists", () => {
    expect(values("5 * * * *", "minute")).toEqual([5]);
    expect(values("07 * * * *", "minute")).toEqual([7]);
    expect(values("0-4,58-59 * * * *", "minute")).toEqual([0, 1, 2, 3, 4, 58, 59]);
    expect(values("10-30/10 * * * *", "minute")).toEqual([10, 20, 30]);
    expect(values("50/4 * * * *", "minute")).toEqual([50, 54, 58]); // a/n = a-59/n
    expect(values("*/60 * * * *", "minute")).toEqual([0]);
    expect(values("* */6 * * *", "hour")).toEqual([0, 6, 12, 18]);
    expect(values("* * 1/10 * *", "dayOfMonth")).toEqual([1, 11, 21, 31]);
    expect(values("* * *,5 * *", "dayOfMonth")).toEqual(range(1, 31));
    expect(values("* * * */3 *", "month")).toEqual([1, 4, 7, 10]);
    expect(values("* * * jan,Jul,DEC *", "month")).toEqual([1, 7, 12]);
    expect(values("* * * FEB-apr/2 *", "month")).toEqual([2, 4]);
    expect(values("* * * 3,1,3 *", "month")).toEqual([1, 3]);
  });

  it("numbers Sunday 0 or 7 and normalizes day-of-week to 0-6", () => {
    expect(values("* * * * 7", "dayOfWeek")).toEqual([0]);
    expect(values("* * * * 0,7", "dayOfWeek")).toEqual([0]);
    expect(values("* * * * sun", "dayOfWeek")).toEqual([0]);
    expect(values("* * * * 5-7", "dayOfWeek")).toEqual([0, 5, 6]);
    expect(values("* * * * FRI-7", "dayOfWeek")).toEqual([0, 5, 6]);
    expect(values("* * * * sat-sun", "dayOfWeek")).toEqual([0, 6]);
    expect(values("* * * * SUN-TUE", "dayOfWeek")).toEqual([0, 1, 2]);
    expect(values("* * * * MON-SUN/2", "dayOfWeek")).toEqual([0, 1, 3, 5]);
    expect(values("* * * * 0-7", "dayOfWeek")).toEqual(range(0, 6));
    expect(values("* * * * */2", "dayOfWeek")).toEqual([0, 2, 4, 6]);
    // As in cronie, day-of-week runs 0-7, so a/n reaches Sunday as 7.
    expect(values("* * * * 1/2", "dayOfWeek")).toEqual([0, 1, 3, 5]);
    expect(parseCron("* * * * 7").dayOfWeek.parts).toEqual([{ text: "7", start: 7, end: 7, step: 1 }]);
  });

  it.each([
    ["@hourly", "0 * * * *"],
    ["@daily", "0 0 * * *"],
    ["@midnight", "0 0 * * *"],
    ["@weekly", "0 0 * * 0"],
    ["@monthly", "0 0 1 * *"],
    ["@yearly", "0 0 1 1 *"],
    ["@annually", "0 0 1 1 *"],
    [" @Daily ", "0 0 * * *"],
  ])("expands the nickname %s to %s", (nickname, expression) => {
    expect(parseCron(nickname)).toEqual(parseCron(expression));
  });

  const NICKNAMES = "@hourly, @daily, @midnight, @weekly, @monthly, @yearly, @annually";
  it.each<[string, string, string | null, string | null]>([
    ["* * * *", "expected 5 fields (minute hour day-of-month month day-of-week), got 4", null, null],
    ["0 * * * * *", "expected 5 fields (minute hour day-of-month month day-of-week), got 6", null, null],
    ["   ", "expected 5 fields (minute hour day-of-month month day-of-week), got 0", null, null],
    ["@reboot", `'@reboot' is not a supported nickname; use one of ${NICKNAMES} or a 5-field cron expression`, null, null],
    ["@yearly-ish", `'@yearly-ish' is not a supported nickname; use one of ${NICKNAMES} or a 5-field cron expression`, null, null],
    ["61 * * * *", "minute value 61 is out of range 0-59", "minute", "61"],
    ["* 24 * * *", "hour value 24 is out of range 0-23", "hour", "24"],
    ["* * 0 * *", "day-of-month value 0 is out of range 1-31", "day-of-month", "0"],
    ["* * 32 * *", "day-of-month value 32 is out of range 1-31", "day-of-month", "32"],
    ["* * * 13 *", "month value 13 is out of range 1-12", "month", "13"],
    ["* * * * 8", "day-of-week value 8 is out of range 0-7", "day-of-week", "8"],
    ["* * * * 1-8", "day-of-week value 8 is out of range 0-7", "day-of-week", "8"],
    ["* * * * FOO", "day-of-week value 'FOO' is not a number or a name (SUN-SAT)", "day-of-week", "FOO"],
    ["* * * * MONDAY", "day-of-week value 'MONDAY' is not a number or a name (SUN-SAT)", "day-of-week", "MONDAY"],
    ["* * * JANUARY *", "month value 'JANUARY' is not a number or a name (JAN-DEC)", "month", "JANUARY"],
    ["* * MON * *", "day-of-month value 'MON' is not a number", "day-of-month", "MON"],
    ["x * * * *", "minute value 'x' is not a number", "minute", "x"],
    ["-1 * * * *", "minute item '-1' is missing a value", "minute", "-1"],
    ["5- * * * *", "minute item '5-' is missing a value", "minute", "5-"],
    ["1-2-3 * * * *", "minute range '1-2-3' has more than one '-'", "minute", "1-2-3"],
    ["*/0 * * * *", "minute step 0 in '*/0' must be at least 1", "minute", "0"],
    ["* 1-5/0 * * *", "hour step 0 in '1-5/0' must be at least 1", "hour", "0"],
    ["*/x * * * *", "minute step 'x' in '*/x' is not a number", "minute", "x"],
    ["*/ * * * *", "minute item '*/' is missing a step", "minute", "*/"],
    ["*/2/3 * * * *", "minute item '*/2/3' has more than one '/'", "minute", "*/2/3"],
    ["* 22-2 * * *", "hour range '22-2' starts after it ends (22 > 2)", "hour", "22-2"],
    ["* * * DEC-JAN *", "month range 'DEC-JAN' starts after it ends (12 > 1)", "month", "DEC-JAN"],
    ["* * * * 6-0", "day-of-week range '6-0' starts after it ends (6 > 0); use 7 for Sunday at the end of a range", "day-of-week", "6-0"],
    ["* * * * SUN-SAT,SAT-FRI", "day-of-week range 'SAT-FRI' starts after it ends (6 > 5)", "day-of-week", "SAT-FRI"],
    ["1,,2 * * * *", "minute has an empty list item in '1,,2'", "minute", "1,,2"],
    ["0 0 ? * MON", "day-of-month value '?' is not a number", "day-of-month", "?"],
    ["15 10 L * ?", "day-of-month value 'L' is not a number", "day-of-month", "L"],
    ["0 0 15W * *", "day-of-month value '15W' is not a number", "day-of-month", "15W"],
    ["0 0 * * 5#2", "day-of-week value '5#2' is not a number or a name (SUN-SAT)", "day-of-week", "5#2"],
    ["0 0 * * 1.5", "day-of-week value '1.5' is not a number or a name (SUN-SAT)", "day-of-week", "1.5"],
  ])("rejects %j: %s", (schedule, message, field, value) => {
    const error = rejection(schedule);
    expect(error.code).toBe("invalid_schedule");
    expect(error.status).toBe(400);
    expect(error.message).toBe(message);
    expect(error.details).toEqual({ schedule, ...(field === null ? {} : { field, value }) });
  });
});

describe("cronForCroner and nextRunAt", () => {
  it("writes restricted fields as value lists and keeps * as *", () => {
    expect(cronForCroner(parseCron("*/20 9-11 * JAN,jul 5-7"))).toBe("0,20,40 9,10,11 * 1,7 0,5,6");
    expect(cronForCroner(parseCron("@daily"))).toBe("0 0 * * *");
  });

  const from = new Date("2026-03-03T12:00:00Z"); // a Tuesday
  const runs = (schedule: string, count: number, zone = "UTC") => {
    const out: string[] = [];
    let at = from;
    for (let i = 0; i < count; i++) {
      out.push(nextRunAt(schedule, zone, at));
      at = new Date(out[i] as string);
    }
    return out.map((iso) => iso.slice(0, 16));
  };

  it("fires on days matching either day field when both are restricted (classic OR)", () => {
    expect(runs("0 0 1 * MON", 5)).toEqual(["2026-03-09T00:00", "2026-03-16T00:00", "2026-03-23T00:00", "2026-03-30T00:00", "2026-04-01T00:00"]);
    // `*/2` is restricted too (croner's rule, and POSIX's); cronie would AND it.
    expect(runs("0 0 */2 * MON", 3)).toEqual(["2026-03-05T00:00", "2026-03-07T00:00", "2026-03-09T00:00"]);
  });

  it("runs what croner alone refuses (a/n) and Sunday as 7 in ranges", () => {
    expect(runs("50/4 * * * *", 4)).toEqual(["2026-03-03T12:50", "2026-03-03T12:54", "2026-03-03T12:58", "2026-03-03T13:50"]);
    expect(runs("0 0 * * FRI-7", 4)).toEqual(["2026-03-06T00:00", "2026-03-07T00:00", "2026-03-08T00:00", "2026-03-13T00:00"]);
  });

  it("names the problem precisely and rejects dates that never come", () => {
    expect(() => nextRunAt("61 * * * *", "UTC", from)).toThrow("minute value 61 is out of range 0-59");
    expect(() => nextRunAt("0 0 31 2 *", "UTC", from)).toThrow("'0 0 31 2 *' never fires: none of its months has that day of the month");
    expect(() => nextRunAt("0 0 * * *", "Mars/Base", from)).toThrow("'Mars/Base' is not an IANA time zone");
  });
});
