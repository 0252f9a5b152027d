import { Cron } from "croner";
import { cronForCroner, parseCron } from "./parseCron";

/**
 * Firing times of a schedule in its time zone, by croner: classic cron day-of-month OR
 * day-of-week, and DST as Vixie cron does it (a time in the spring-forward gap runs once
 * right after the gap; a time in the repeated autumn hour runs once; jobs with a wildcard
 * hour run on real time through both). The expression is validated by parseCron and handed
 * to croner as explicit value lists, so croner sees exactly what parseCron accepted.
 */
export function scheduleCron(schedule: string, timezone: string): Cron {
  // domAndDow: false is croner's default, spelled out: both day fields restricted means either matches.
  return new Cron(cronForCroner(parseCron(schedule)), { timezone, paused: true, mode: "5-part", domAndDow: false });
}

/** The first firing strictly after `after`, or null if there is none. */
export function nextFiring(schedule: string, timezone: string, after: Date): Date | null {
  return scheduleCron(schedule, timezone).nextRun(after);
}

/** The latest firing at or before `at`, or null if there is none. */
export function lastFiring(schedule: string, timezone: string, at: Date): Date | null {
  return scheduleCron(schedule, timezone).previousRuns(1, new Date(at.getTime() + 1))[0] ?? null;
}
