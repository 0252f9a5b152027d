import { z } from "zod";

export const PlanSchema = z.strictObject({
  concurrency: z.int().min(1),
  invocations_per_month: z.int().min(0),
  max_timeout_seconds: z.int().min(1).max(900),
  max_memory_mb: z.int().min(128).max(10240),
});

export type Plan = z.infer<typeof PlanSchema>;
export type Plans = Record<string, Plan>;

/** The plans of API.md; a deployment may replace them (BROWSERFN_PLANS locally, context on AWS). */
export const DEFAULT_PLANS: Plans = {
  free: { concurrency: 2, invocations_per_month: 1_000, max_timeout_seconds: 300, max_memory_mb: 2048 },
  pro: { concurrency: 25, invocations_per_month: 100_000, max_timeout_seconds: 900, max_memory_mb: 10240 },
};

export const DEFAULT_PLAN = "free";
