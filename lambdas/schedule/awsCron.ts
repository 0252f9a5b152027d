import { ApiError } from "../http/errors";
import { parseCron, type CronField, type CronPart } from "./parseCron";

/*
 * Classic 5-field cron → EventBridge Scheduler `cron(minute hour day-of-month month day-of-week year)`.
 *
 * AWS rules relied on (EventBridge "Cron expressions reference",
 * docs.aws.amazon.com/eventbridge/latest/userguide/eb-cron-expressions.html, which the Scheduler
 * guide's schedule-types page follows): six fields; minutes/hours/month/year take `, - * /`,
 * day-of-month `, - * ? / L W`, day-of-week `, - * ? L #` (no `/`), day-of-week is 1-7 = SUN-SAT;
 * one of day-of-month / day-of-week must be `?` and the two cannot both hold values.
 *
 *   classic item / field                  AWS
 *   ------------------------------------  ------------------------------------------------------
 *   `*` (whole field)                     `*`
 *   `n`, month name                       `n` (names become numbers)
 *   `a-b`                                 `a-b`   (`*` inside a list: `min-max`)
 *   `*\/n`, `a/n`, `a-max/n`              `start/n` (documented `1/10` form; same values: start,
 *                                         start+n, … up to the field's maximum)
 *   `a-b/n` with b < max                  explicit list (AWS documents no range-with-step)
 *   any step giving a single value        that value
 *   day-of-month `*`, day-of-week `*`     `*` `?`
 *   only day-of-month restricted          day-of-month as above, day-of-week `?`
 *   only day-of-week restricted           `?`, day-of-week from its day set renumbered
 *                                         0/7→1 … 6→7; runs of 3+ days as ranges, else lists,
 *                                         so wrapping ranges stay exact (FRI-SUN `5-7` → `1,6,7`)
 *   both restricted, either covers every  `*` `?` (classic OR with an every-day field = every day)
 *     day (all of 1-31 or all 7 days)
 *   both restricted otherwise             rejected: classic cron fires on days matching EITHER,
 *                                         which one AWS expression cannot say
 *   year                                  `*`
 * Nicknames are expanded by parseCron first (`@daily` → `0 0 * * *` → `cron(0 0 * * ? *)`).
 */

/** The EventBridge Scheduler expression with the same meaning; throws 400 `invalid_schedule` when none exists. */
export function toAwsScheduleExpression(schedule: string): string {
  const fields = parseCron(schedule);
  const [dayOfMonth, dayOfWeek] = dayFields(schedule, fields.dayOfMonth, fields.dayOfWeek);
  return `cron(${awsField(fields.minute)} ${awsField(fields.hour)} ${dayOfMonth} ${awsField(fields.month)} ${dayOfWeek} *)`;
}

function dayFields(schedule: string, dom: CronField, dow: CronField): [string, string] {
  if (dom.star && dow.star) return ["*", "?"];
  if (dow.star) return [awsField(dom), "?"];
  if (dom.star) return ["?", awsDaysOfWeek(dow.values)];
  if (dom.values.length === 31 || dow.values.length === 7) return ["*", "?"];
  throw new ApiError(
    "invalid_schedule",
    `day-of-month '${dom.text}' and day-of-week '${dow.text}' are both restricted, which in cron means it runs on days ` +
      `matching either one; an AWS EventBridge schedule cannot express that (it allows only one of the two). ` +
      `Set one of them to '*'.`,
    { schedule, field: "day-of-week", value: dow.text },
  );
}

function awsField(field: CronField): string {
  return field.star ? "*" : field.parts.map((part) => awsPart(part, field.max)).join(",");
}

function awsPart({ start, end, step }: CronPart, max: number): string {
  if (step === 1) return start === end ? `${start}` : `${start}-${end}`;
  if (start + step > end) return `${start}`;
  if (end === max) return `${start}/${step}`;
  const values: number[] = [];
  for (let v = start; v <= end; v += step) values.push(v);
  return values.join(",");
}

/** Classic days 0-6 (0 = Sunday) → AWS 1-7 (1 = Sunday), as ranges (3+ consecutive days) and single days. */
function awsDaysOfWeek(days: number[]): string {
  const aws = days.map((day) => day + 1);
  const items: string[] = [];
  for (let i = 0; i < aws.length; ) {
    let j = i;
    while (j + 1 < aws.length && aws[j + 1] === (aws[j] as number) + 1) j += 1;
    if (j - i >= 2) items.push(`${aws[i]}-${aws[j]}`);
    else for (let k = i; k <= j; k += 1) items.push(`${aws[k]}`);
    i = j + 1;
  }
  return items.join(",");
}
