import type { Deps } from "../deps";
import { ApiError } from "../http/errors";
import { runScheduled } from "./runScheduled";

/** What EventBridge Scheduler sends the scheduled-run Lambda (the schedule's target input). */
export interface ScheduledRunEvent {
  function_id: string;
  /** `<aws.scheduler.scheduled-time>`: the due time this delivery is for. */
  scheduled_for: string;
}

/**
 * The scheduled-run Lambda's handler: one firing through the same entry as the local
 * scheduler. It returns once the run has started: on AWS the run workflow (Step Functions)
 * invokes the function's Lambda and its recorder Lambda writes the run's end, so nothing here
 * waits for it or reads its record after the start (runScheduled stops the runtime watching).
 */
export function makeScheduledRunHandler(deps: Deps) {
  return async (event: ScheduledRunEvent): Promise<{ outcome: string; run_id?: string; reason?: string }> => {
    if (typeof event?.function_id !== "string" || Number.isNaN(Date.parse(event?.scheduled_for ?? ""))) {
      throw new ApiError("invalid_request", "A scheduled run needs function_id and an ISO 8601 scheduled_for");
    }
    const scheduledFor = new Date(event.scheduled_for).toISOString();
    const result = await runScheduled(deps, event.function_id, scheduledFor);
    if (result.outcome !== "started") return { outcome: result.outcome, reason: result.reason };
    return { outcome: "started", run_id: result.runId };
  };
}
