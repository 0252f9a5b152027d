import {
  CreateScheduleCommand,
  DeleteScheduleCommand,
  UpdateScheduleCommand,
  type CreateScheduleCommandInput,
} from "@aws-sdk/client-scheduler";
import { validateTimezone } from "../functions/schedule";
import type { FunctionItem } from "../functions/types";
import { toAwsScheduleExpression } from "./awsCron";
import type { Scheduler } from "./scheduler";

export type SchedulerCommand = CreateScheduleCommand | UpdateScheduleCommand | DeleteScheduleCommand;

export interface AwsSchedulerOptions {
  /** A SchedulerClient, or a test double that records what it is sent. Its owner destroys it. */
  client: { send(command: SchedulerCommand): Promise<unknown> };
  /** The schedule group holding every function's schedule. */
  groupName: string;
  /** The Lambda that performs scheduled runs. */
  targetArn: string;
  /** The role EventBridge Scheduler assumes to invoke the target. */
  roleArn: string;
  /** Where undeliverable invocations go (an SQS queue). */
  deadLetterArn: string;
  /** Prepended to the function_id to name its schedule. */
  namePrefix: string;
}

/** Schedule and group names: 1-64 characters of [0-9a-zA-Z-_.] (Scheduler API reference). */
const NAME_PATTERN = /^[0-9a-zA-Z_.-]{1,64}$/;
/** `fn_` + 26 ULID characters. */
const FUNCTION_ID_LENGTH = 29;

/**
 * Retries cover delivery failures (throttling, service errors) of the invoke, not the run
 * itself: the Lambda is invoked asynchronously. Two retries ride out a brief outage without
 * piling up; an invocation older than an hour is dropped to the dead-letter queue rather than
 * started late (an hourly job would otherwise overlap its next run). AWS defaults are 185 / 24 h.
 */
const RETRY_POLICY = { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 3600 };

/**
 * The EventBridge Scheduler adapter: one schedule per function, named
 * `${namePrefix}${function_id}`, in one group, invoking the scheduled-run Lambda with
 * `{ function_id, scheduled_for }` (the time the schedule was due, filled in by Scheduler).
 */
export function createAwsScheduler(options: AwsSchedulerOptions): Scheduler {
  const { client, groupName, targetArn, roleArn, deadLetterArn, namePrefix } = options;
  if (!NAME_PATTERN.test(groupName)) throw new Error(`schedule group name '${groupName}' must be 1-64 characters of [0-9a-zA-Z-_.]`);
  if (!NAME_PATTERN.test(`${namePrefix}x`) || namePrefix.length > 64 - FUNCTION_ID_LENGTH) {
    throw new Error(`schedule name prefix '${namePrefix}' must be at most ${64 - FUNCTION_ID_LENGTH} characters of [0-9a-zA-Z-_.]`);
  }
  const scheduleName = (fn: FunctionItem) => `${namePrefix}${fn.function_id}`;

  const scheduleInput = (fn: FunctionItem, schedule: string): CreateScheduleCommandInput => ({
    Name: scheduleName(fn),
    GroupName: groupName,
    ScheduleExpression: toAwsScheduleExpression(schedule),
    ScheduleExpressionTimezone: fn.schedule_timezone,
    FlexibleTimeWindow: { Mode: "OFF" },
    State: "ENABLED",
    Target: {
      Arn: targetArn,
      RoleArn: roleArn,
      Input: JSON.stringify({ function_id: fn.function_id, scheduled_for: "<aws.scheduler.scheduled-time>" }),
      RetryPolicy: RETRY_POLICY,
      DeadLetterConfig: { Arn: deadLetterArn },
    },
    ActionAfterCompletion: "NONE",
  });

  const remove = async (fn: FunctionItem): Promise<void> => {
    try {
      await client.send(new DeleteScheduleCommand({ Name: scheduleName(fn), GroupName: groupName }));
    } catch (error) {
      if (!isAwsError(error, "ResourceNotFoundException")) throw error;
    }
  };

  return {
    check(schedule, timezone) {
      validateTimezone(timezone);
      toAwsScheduleExpression(schedule);
    },

    // Update first, create when missing: an update (the common case once a function has a
    // schedule) is one call, a create two; no GetSchedule permission, no read-then-write gap.
    // A create that loses a race to a concurrent create updates instead.
    async sync(fn) {
      if (fn.schedule === null) return remove(fn);
      const input = scheduleInput(fn, fn.schedule);
      try {
        await client.send(new UpdateScheduleCommand(input));
        return;
      } catch (error) {
        if (!isAwsError(error, "ResourceNotFoundException")) throw error;
      }
      try {
        await client.send(new CreateScheduleCommand(input));
      } catch (error) {
        if (!isAwsError(error, "ConflictException")) throw error;
        await client.send(new UpdateScheduleCommand(input));
      }
    },

    remove,

    // The client is built and destroyed by whoever built this adapter.
    async close() {},
  };
}

/** Matched by name: an SDK error class from another copy of the SDK still counts. */
function isAwsError(error: unknown, name: string): boolean {
  return error instanceof Error && error.name === name;
}
