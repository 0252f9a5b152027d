import type { Plans } from "../config/plans";
import { ApiError } from "../http/errors";

/** 400 when a function asks for more time or memory than the account's plan allows. */
export function checkPlanCaps(
  plans: Plans,
  planName: string,
  timeoutSeconds: number | undefined,
  memoryMb: number | undefined,
): void {
  const plan = plans[planName];
  if (!plan) return;
  if (timeoutSeconds !== undefined && timeoutSeconds > plan.max_timeout_seconds) {
    throw new ApiError(
      "invalid_request",
      `timeout_seconds ${timeoutSeconds} exceeds the '${planName}' plan's limit of ${plan.max_timeout_seconds}`,
      { field: "timeout_seconds", limit: plan.max_timeout_seconds },
    );
  }
  if (memoryMb !== undefined && memoryMb > plan.max_memory_mb) {
    throw new ApiError(
      "invalid_request",
      `memory_mb ${memoryMb} exceeds the '${planName}' plan's limit of ${plan.max_memory_mb}`,
      { field: "memory_mb", limit: plan.max_memory_mb },
    );
  }
}

/** Settings lowered to fit a plan's caps (a fork of a function made under a bigger plan). */
export function fitPlanCaps(plans: Plans, planName: string, timeoutSeconds: number, memoryMb: number) {
  const plan = plans[planName];
  return {
    timeout_seconds: plan ? Math.min(timeoutSeconds, plan.max_timeout_seconds) : timeoutSeconds,
    memory_mb: plan ? Math.min(memoryMb, plan.max_memory_mb) : memoryMb,
  };
}
