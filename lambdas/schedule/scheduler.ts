import type { FunctionItem } from "../functions/types";

/**
 * Runs functions on their schedules. One port, an adapter per platform (EventBridge Scheduler
 * on AWS, an in-process timer locally); built once at the edge and passed down.
 */
export interface Scheduler {
  /** Rejects (400 invalid_schedule) a schedule this adapter cannot run; called at create/update. */
  check(schedule: string, timezone: string): void;
  /** Makes the function's schedule match its record (create, update, or remove when schedule is null). */
  sync(fn: FunctionItem): Promise<void>;
  /** Removes the function's schedule, if any. */
  remove(fn: FunctionItem): Promise<void>;
  close(): Promise<void>;
}
