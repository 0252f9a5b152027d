import { Cron } from "croner";
import { ApiError } from "../http/errors";

const NICKNAMES = new Set(["@hourly", "@daily", "@weekly", "@monthly"]);

/** Throws 400 `invalid_timezone` unless `zone` is an IANA time zone this runtime knows. */
export function validateTimezone(zone: string): void {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    if (zone.trim() === "") throw new RangeError("empty");
  } catch {
    throw new ApiError("invalid_timezone", `'${zone}' is not an IANA time zone (for example 'UTC' or 'Europe/Berlin')`, {
      schedule_timezone: zone,
    });
  }
}

/**
 * Validates a 5-field cron expression or nickname in a time zone and returns the next
 * time it fires after `from` (ISO 8601 UTC). Throws 400 `invalid_schedule` with the reason.
 */
export function nextRunAt(schedule: string, timezone: string, from: Date): string {
  validateTimezone(timezone);
  const expression = schedule.trim();
  if (!NICKNAMES.has(expression) && expression.split(/\s+/).length !== 5) {
    throw new ApiError(
      "invalid_schedule",
      `'${schedule}' is not a 5-field cron expression (minute hour day-of-month month day-of-week) or one of ${[...NICKNAMES].join(", ")}`,
      { schedule },
    );
  }
  let cron: Cron;
  try {
    cron = new Cron(expression, { timezone, paused: true, mode: "5-part" });
  } catch (error) {
    throw new ApiError("invalid_schedule", `'${schedule}' is not a valid cron expression: ${(error as Error).message}`, {
      schedule,
    });
  }
  const next = cron.nextRun(from);
  if (!next) throw new ApiError("invalid_schedule", `'${schedule}' never fires`, { schedule });
  return next.toISOString();
}
