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
 * scheduler, waiting for the run to end (a Lambda must not return while its work goes on).
 */
export function makeScheduledRunHandler(deps: Deps) {
  return async (event: ScheduledRunEvent): Promise<{ outcome: string; run_id?: string; status?: string; reason?: string }> => {
    if (typeof event?.function_id !== "string" || Number.isNaN(Date.parse(event?.scheduled_for ?? ""))) {
      throw new ApiError("invalid_request", "A scheduled run needs function_id and an ISO 8601 scheduled_for");
    }
    const scheduledFor = new Date(event.scheduled_for).toISOString();
    const result = await runScheduled(deps, event.function_id, scheduledFor);
    if (result.outcome !== "started") return { outcome: result.outcome, reason: result.reason };
    const run = await result.run;
    return { outcome: "started", run_id: run.run_id, status: run.status };
  };
}
