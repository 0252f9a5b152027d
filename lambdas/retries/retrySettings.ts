import { z } from "zod";

/** A function's `retries` setting: how often a failed run (async call, schedule, batch) runs again. */
export interface RetrySettings {
  /** Attempts in all, the first included (1: no retry). */
  max_attempts: number;
  /** The wait before the second attempt; it doubles for each attempt after that, at most MAX_BACKOFF_SECONDS. */
  backoff_seconds: number;
}

export const MAX_ATTEMPTS = { min: 1, max: 10, default: 1 } as const;
export const BACKOFF_SECONDS = { min: 1, max: 3600, default: 10 } as const;

/** The setting of a function that has none (or had it removed): one attempt, no retry. */
export const NO_RETRIES: RetrySettings = { max_attempts: MAX_ATTEMPTS.default, backoff_seconds: BACKOFF_SECONDS.default };

/** `retries` in a create or update body: `null` (update) removes it; absent fields take their defaults. */
export const RetriesInput = z
  .strictObject({
    max_attempts: z.int().min(MAX_ATTEMPTS.min).max(MAX_ATTEMPTS.max).optional().describe("Attempts in all, the first included; 1 (the default) retries nothing"),
    backoff_seconds: z
      .int()
      .min(BACKOFF_SECONDS.min)
      .max(BACKOFF_SECONDS.max)
      .optional()
      .describe("Wait before the second attempt (default 10); doubled for each further attempt, at most 3600"),
  })
  .nullable()
  .describe(
    "Runs of an async call, a schedule or a batch that end failed (function_error, function_crashed) or timed_out run again after the backoff, as a new attempt of the same run; sync calls are never retried. `null` removes the setting",
  )
  .meta({ id: "RetriesInput" });

/** `retries` in a function record: both fields, defaults filled in. */
export const RetriesView = z
  .object({
    max_attempts: z.int().meta({ minimum: MAX_ATTEMPTS.min, maximum: MAX_ATTEMPTS.max }),
    backoff_seconds: z.int().meta({ minimum: BACKOFF_SECONDS.min, maximum: BACKOFF_SECONDS.max }),
  })
  .meta({ id: "Retries" });

/** The setting a create or update asks for, defaults filled in (null: no retries). */
export function retriesFromInput(input: z.infer<typeof RetriesInput>): RetrySettings {
  if (input === null) return { ...NO_RETRIES };
  return { max_attempts: input.max_attempts ?? MAX_ATTEMPTS.default, backoff_seconds: input.backoff_seconds ?? BACKOFF_SECONDS.default };
}

/** A stored setting, field by field and within bounds (a record written before retries existed has none: no retries). */
export function retriesOf(fn: { retries?: RetrySettings | null }): RetrySettings {
  const stored = fn.retries;
  if (!stored || typeof stored !== "object") return { ...NO_RETRIES };
  const within = (value: unknown, bounds: { min: number; max: number; default: number }) =>
    Number.isInteger(value) && (value as number) >= bounds.min && (value as number) <= bounds.max ? (value as number) : bounds.default;
  return { max_attempts: within(stored.max_attempts, MAX_ATTEMPTS), backoff_seconds: within(stored.backoff_seconds, BACKOFF_SECONDS) };
}
