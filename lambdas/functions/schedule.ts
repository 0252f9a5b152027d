import type { Cron } from "croner";
import { ApiError } from "../http/errors";
import { scheduleCron } from "../schedule/cronTimes";

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
 * Validates a 5-field cron expression or nickname (see parseCron) in a time zone and returns
 * the next time it fires after `from` (ISO 8601 UTC). Throws 400 `invalid_schedule` with the reason.
 */
export function nextRunAt(schedule: string, timezone: string, from: Date): string {
  validateTimezone(timezone);
  let cron: Cron;
  try {
    cron = scheduleCron(schedule, timezone);
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw new ApiError("invalid_schedule", `'${schedule}' is not a valid cron expression: ${(error as Error).message}`, {
      schedule,
    });
  }
  const next = cron.nextRun(from);
  if (!next) throw new ApiError("invalid_schedule", `'${schedule}' never fires: none of its months has that day of the month`, { schedule });
  return next.toISOString();
}
