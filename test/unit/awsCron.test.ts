import type { ApiError } from "../../lambdas/http/errors";
import { thrownApiError } from "../helpers/apiErrors";
import { toAwsScheduleExpression } from "../../lambdas/schedule/awsCron";

const rejection = (schedule: string): ApiError => thrownApiError(() => toAwsScheduleExpression(schedule), `'${schedule}' was converted`);

describe("toAwsScheduleExpression", () => {
  it.each([
    // every minute, hour, day
    ["* * * * *", "cron(* * * * ? *)"],
    ["*/5 * * * *", "cron(0/5 * * * ? *)"],
    ["0 * * * *", "cron(0 * * * ? *)"],
    ["0 9 * * *", "cron(0 9 * * ? *)"],
    ["15,45 8-18 * * *", "cron(15,45 8-18 * * ? *)"],
    ["5/15 * * * *", "cron(5/15 * * * ? *)"],
    ["0-59/20 * * * *", "cron(0/20 * * * ? *)"],
    ["10-40/15 * * * *", "cron(10,25,40 * * * ? *)"],
    ["*/60 * * * *", "cron(0 * * * ? *)"],
    ["0 */6 * * *", "cron(0 0/6 * * ? *)"],
    ["0 9-17/4 * * *", "cron(0 9,13,17 * * ? *)"],
    ["0 *,5 * * *", "cron(0 0-23,5 * * ? *)"],
    // day-of-month only
    ["0 0 1 * *", "cron(0 0 1 * ? *)"],
    ["0 0 1,15 * *", "cron(0 0 1,15 * ? *)"],
    ["0 0 */10 * *", "cron(0 0 1/10 * ? *)"],
    ["0 0 1-7 * *", "cron(0 0 1-7 * ? *)"],
    // months
    ["0 12 * JAN,JUL *", "cron(0 12 * 1,7 ? *)"],
    ["0 12 1 */3 *", "cron(0 12 1 1/3 ? *)"],
    ["0 12 1 mar-may *", "cron(0 12 1 3-5 ? *)"],
    // day-of-week only: renumbered 0/7→1 … 6→7
    ["30 2 * * MON", "cron(30 2 ? * 2 *)"],
    ["0 9 * * 1-5", "cron(0 9 ? * 2-6 *)"],
    ["0 9 * * mon-fri", "cron(0 9 ? * 2-6 *)"],
    ["0 0 * * 0", "cron(0 0 ? * 1 *)"],
    ["0 0 * * 7", "cron(0 0 ? * 1 *)"],
    ["0 0 * * SUN,SAT", "cron(0 0 ? * 1,7 *)"],
    ["0 0 * * 1,2", "cron(0 0 ? * 2,3 *)"],
    ["0 0 * * 5-7", "cron(0 0 ? * 1,6,7 *)"],
    ["0 0 * * FRI-SUN", "cron(0 0 ? * 1,6,7 *)"],
    ["0 0 * * 4-7", "cron(0 0 ? * 1,5-7 *)"],
    ["0 0 * * 0-7", "cron(0 0 ? * 1-7 *)"],
    ["0 0 * * */2", "cron(0 0 ? * 1,3,5,7 *)"],
    ["0 0 * * 1-5/2", "cron(0 0 ? * 2,4,6 *)"],
    ["0 0 * * 1/2", "cron(0 0 ? * 1,2,4,6 *)"],
    ["0 8 * JAN-MAR MON", "cron(0 8 ? 1-3 2 *)"],
    // both restricted, one matching every day: classic OR fires daily
    ["0 0 1-31 * MON", "cron(0 0 * * ? *)"],
    ["0 0 15 * 0-6", "cron(0 0 * * ? *)"],
    // nicknames
    ["@hourly", "cron(0 * * * ? *)"],
    ["@daily", "cron(0 0 * * ? *)"],
    ["@midnight", "cron(0 0 * * ? *)"],
    ["@weekly", "cron(0 0 ? * 1 *)"],
    ["@monthly", "cron(0 0 1 * ? *)"],
    ["@yearly", "cron(0 0 1 1 ? *)"],
    ["@annually", "cron(0 0 1 1 ? *)"],
  ])("%s → %s", (schedule, expression) => {
    expect(toAwsScheduleExpression(schedule)).toBe(expression);
  });

  it.each([
    ["0 0 1 * MON", "'1'", "'MON'"],
    ["0 0 1,15 * 1-5", "'1,15'", "'1-5'"],
    ["0 0 */2 * SUN", "'*/2'", "'SUN'"],
    ["0 12 13 * FRI", "'13'", "'FRI'"],
  ])("rejects %s: both day fields restricted mean dom OR dow, which AWS cannot express", (schedule, dom, dow) => {
    const error = rejection(schedule);
    expect(error.code).toBe("invalid_schedule");
    expect(error.message).toBe(
      `day-of-month ${dom} and day-of-week ${dow} are both restricted, which in cron means it runs on days matching ` +
        "either one; an AWS EventBridge schedule cannot express that (it allows only one of the two). Set one of them to '*'.",
    );
    expect(error.details).toEqual({ schedule, field: "day-of-week", value: dow.slice(1, -1) });
  });

  it.each([
    ["15 10 L * ?", "day-of-month value 'L' is not a number"],
    ["0 0 ? * MON", "day-of-month value '?' is not a number"],
    ["0 10 * * ? *", "expected 5 fields (minute hour day-of-month month day-of-week), got 6"],
    ["0 0 * * 6-0", "day-of-week range '6-0' starts after it ends (6 > 0); use 7 for Sunday at the end of a range"],
    ["0 0 * * 5#2", "day-of-week value '5#2' is not a number or a name (SUN-SAT)"],
    ["61 * * * *", "minute value 61 is out of range 0-59"],
    ["@reboot", "'@reboot' is not a supported nickname; use one of @hourly, @daily, @midnight, @weekly, @monthly, @yearly, @annually or a 5-field cron expression"],
  ])("rejects the invalid %j as parseCron does: %s", (schedule, message) => {
    const error = rejection(schedule);
    expect(error.code).toBe("invalid_schedule");
    expect(error.message).toBe(message);
  });
});
