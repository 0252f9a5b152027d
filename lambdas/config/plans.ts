import { z } from "zod";

/** What a function's timeout_seconds can be, whatever the plan (a plan's cap is within it). */
export const TIMEOUT_SECONDS = { min: 1, max: 900 } as const;
/** What a function's memory_mb can be, whatever the plan (a plan's cap is within it). */
export const MEMORY_MB = { min: 128, max: 10240 } as const;

export const PlanSchema = z.strictObject({
  concurrency: z.int().min(1),
  invocations_per_month: z.int().min(0),
  max_timeout_seconds: z.int().min(TIMEOUT_SECONDS.min).max(TIMEOUT_SECONDS.max),
  max_memory_mb: z.int().min(MEMORY_MB.min).max(MEMORY_MB.max),
  /**
   * What the account may hold (artifacts, run records: params, results, logs; profiles count
   * here too when they come), in MB; DEFAULT_MAX_STORAGE_MB when a plan does not say.
   */
  max_storage_mb: z.int().min(1).max(100 * 1024 * 1024).optional(),
  /** How many runs may wait in the account's run queue (default DEFAULT_MAX_QUEUED). */
  max_queued: z.int().min(0).max(1_000_000).optional(),
});

/** A plan's `max_queued` when it names none. */
export const DEFAULT_MAX_QUEUED = 100;

/** How many runs may wait in the run queue of an account on this plan. */
export function maxQueuedOf(plan: Plan): number {
  return plan.max_queued ?? DEFAULT_MAX_QUEUED;
}

export type Plan = z.infer<typeof PlanSchema>;
export type Plans = Record<string, Plan>;

/** The plans of API.md; a deployment may replace them (BROWSERFN_PLANS locally, context on AWS). */
export const DEFAULT_PLANS: Plans = {
  free: { concurrency: 2, invocations_per_month: 1_000, max_timeout_seconds: 300, max_memory_mb: 2048, max_storage_mb: 1024, max_queued: 100 },
  pro: { concurrency: 25, invocations_per_month: 100_000, max_timeout_seconds: 900, max_memory_mb: 10240, max_storage_mb: 51_200, max_queued: 10_000 },
};

/** The storage cap of a plan that names none (a deployment's own plans written before the cap). */
export const DEFAULT_MAX_STORAGE_MB = 1024;

/** A plan's storage cap in bytes. */
export function storageCapBytes(plan: Plan | undefined): number {
  return (plan?.max_storage_mb ?? DEFAULT_MAX_STORAGE_MB) * 1024 * 1024;
}

export const DEFAULT_PLAN = "free";
