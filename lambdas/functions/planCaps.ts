import type { Plans } from "../config/plans";
import { ApiError } from "../http/errors";

/** 400 when a function asks for more time or memory than the account's plan allows. */
export function checkPlanCaps(plans: Plans, planName: string, timeoutSeconds: number, memoryMb: number): void {
  const plan = plans[planName];
  if (!plan) return;
  if (timeoutSeconds > plan.max_timeout_seconds) {
    throw new ApiError(
      "invalid_request",
      `timeout_seconds ${timeoutSeconds} exceeds the '${planName}' plan's limit of ${plan.max_timeout_seconds}`,
      { field: "timeout_seconds", limit: plan.max_timeout_seconds },
    );
  }
  if (memoryMb > plan.max_memory_mb) {
    throw new ApiError(
      "invalid_request",
      `memory_mb ${memoryMb} exceeds the '${planName}' plan's limit of ${plan.max_memory_mb}`,
      { field: "memory_mb", limit: plan.max_memory_mb },
    );
  }
}
