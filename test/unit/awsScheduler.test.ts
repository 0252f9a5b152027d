import {
  ConflictException,
  CreateScheduleCommand,
  DeleteScheduleCommand,
  ResourceNotFoundException,
  SchedulerClient,
  UpdateScheduleCommand,
} from "@aws-sdk/client-scheduler";
import type { FunctionItem } from "../../lambdas/functions/types";
import { ApiError } from "../../lambdas/http/errors";
import { createAwsScheduler, type AwsSchedulerOptions, type SchedulerCommand } from "../../lambdas/schedule/awsScheduler";
import { functionItem } from "../helpers/records";

/** Records every command sent; answers each with the next queued outcome (an error to throw, or success). */
class FakeSchedulerClient {
  readonly sent: SchedulerCommand[] = [];
  private readonly outcomes: (Error | null)[] = [];

  failNext(...outcomes: (Error | null)[]): void {
    this.outcomes.push(...outcomes);
  }

  async send(command: SchedulerCommand): Promise<unknown> {
    this.sent.push(command);
    const outcome = this.outcomes.shift();
    if (outcome) throw outcome;
    return {};
  }

  calls(): [string, unknown][] {
    return this.sent.map((command) => [command.constructor.name, command.input]);
  }
}

const notFound = () => new ResourceNotFoundException({ message: "Schedule bfn-x does not exist.", Message: "Schedule bfn-x does not exist.", $metadata: {} });
const conflict = () => new ConflictException({ message: "Schedule already exists.", Message: "Schedule already exists.", $metadata: {} });

const FUNCTION_ID = "fn_01jabcdefghjkmnpqrstvwxyz0";

function fn(overrides: Partial<FunctionItem> = {}): FunctionItem {
  return functionItem({ function_id: FUNCTION_ID, schedule: "0 9 * * MON-FRI", schedule_timezone: "Europe/Berlin", ...overrides });
}

const OPTIONS = {
  groupName: "browserfn-prod",
  targetArn: "arn:aws:lambda:eu-central-1:123456789012:function:browserfn-scheduled-run",
  roleArn: "arn:aws:iam::123456789012:role/browserfn-scheduler",
  deadLetterArn: "arn:aws:sqs:eu-central-1:123456789012:browserfn-scheduled-dlq",
  namePrefix: "bfn-",
};

const SCHEDULE_INPUT = {
  Name: `bfn-${FUNCTION_ID}`,
  GroupName: "browserfn-prod",
  ScheduleExpression: "cron(0 9 ? * 2-6 *)",
  ScheduleExpressionTimezone: "Europe/Berlin",
  FlexibleTimeWindow: { Mode: "OFF" },
  State: "ENABLED",
  Target: {
    Arn: OPTIONS.targetArn,
    RoleArn: OPTIONS.roleArn,
    Input: `{"function_id":"${FUNCTION_ID}","scheduled_for":"<aws.scheduler.scheduled-time>"}`,
    RetryPolicy: { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 3600 },
    DeadLetterConfig: { Arn: OPTIONS.deadLetterArn },
  },
  ActionAfterCompletion: "NONE",
};
const DELETE_INPUT = { Name: `bfn-${FUNCTION_ID}`, GroupName: "browserfn-prod" };

let client: FakeSchedulerClient;
let scheduler: ReturnType<typeof createAwsScheduler>;
beforeEach(() => {
  client = new FakeSchedulerClient();
  scheduler = createAwsScheduler({ client, ...OPTIONS });
});
afterEach(() => scheduler.close());

describe("createAwsScheduler", () => {
  it("updates a schedule that exists: one UpdateSchedule with the full definition", async () => {
    await scheduler.sync(fn());
    expect(client.calls()).toEqual([["UpdateScheduleCommand", SCHEDULE_INPUT]]);
    expect(client.sent[0]).toBeInstanceOf(UpdateScheduleCommand);
  });

  it("creates a missing schedule: UpdateSchedule answers ResourceNotFound, then CreateSchedule", async () => {
    client.failNext(notFound());
    await scheduler.sync(fn());
    expect(client.calls()).toEqual([
      ["UpdateScheduleCommand", SCHEDULE_INPUT],
      ["CreateScheduleCommand", SCHEDULE_INPUT],
    ]);
    expect(client.sent[1]).toBeInstanceOf(CreateScheduleCommand);
  });

  it("updates after losing a create race (ConflictException)", async () => {
    client.failNext(notFound(), conflict());
    await scheduler.sync(fn());
    expect(client.calls().map(([name]) => name)).toEqual(["UpdateScheduleCommand", "CreateScheduleCommand", "UpdateScheduleCommand"]);
  });

  it("converts the schedule and passes its time zone", async () => {
    await scheduler.sync(fn({ schedule: "@daily", schedule_timezone: "America/New_York" }));
    expect(client.calls()).toEqual([
      ["UpdateScheduleCommand", { ...SCHEDULE_INPUT, ScheduleExpression: "cron(0 0 * * ? *)", ScheduleExpressionTimezone: "America/New_York" }],
    ]);
  });

  it("deletes the schedule when the record has none, and on remove", async () => {
    await scheduler.sync(fn({ schedule: null }));
    await scheduler.remove(fn());
    expect(client.calls()).toEqual([
      ["DeleteScheduleCommand", DELETE_INPUT],
      ["DeleteScheduleCommand", DELETE_INPUT],
    ]);
    expect(client.sent[0]).toBeInstanceOf(DeleteScheduleCommand);
  });

  it("treats removing a missing schedule as done", async () => {
    client.failNext(notFound(), notFound());
    await expect(scheduler.remove(fn())).resolves.toBeUndefined();
    await expect(scheduler.sync(fn({ schedule: null }))).resolves.toBeUndefined();
    expect(client.calls()).toEqual([
      ["DeleteScheduleCommand", DELETE_INPUT],
      ["DeleteScheduleCommand", DELETE_INPUT],
    ]);
  });

  it("passes other errors on", async () => {
    const throttled = Object.assign(new Error("Rate exceeded"), { name: "ThrottlingException" });
    client.failNext(throttled, throttled);
    await expect(scheduler.sync(fn())).rejects.toBe(throttled);
    await expect(scheduler.remove(fn())).rejects.toBe(throttled);
  });

  it("rejects what AWS cannot run before sending anything", async () => {
    await expect(scheduler.sync(fn({ schedule: "0 0 1 * MON" }))).rejects.toThrow(ApiError);
    expect(client.sent).toEqual([]);
  });

  it("checks schedule and time zone with 400 errors", () => {
    expect(() => scheduler.check("0 9 * * 1-5", "Europe/Berlin")).not.toThrow();
    expect(() => scheduler.check("0 0 1 * MON", "UTC")).toThrow(expect.objectContaining({ code: "invalid_schedule" }));
    expect(() => scheduler.check("61 * * * *", "UTC")).toThrow("minute value 61 is out of range 0-59");
    expect(() => scheduler.check("@daily", "Mars/Base")).toThrow(expect.objectContaining({ code: "invalid_timezone" }));
  });

  it("refuses names AWS would refuse (1-64 of [0-9a-zA-Z-_.])", () => {
    expect(() => createAwsScheduler({ client, ...OPTIONS, namePrefix: "x".repeat(36) })).toThrow("at most 35 characters");
    expect(() => createAwsScheduler({ client, ...OPTIONS, namePrefix: "bfn/" })).toThrow("schedule name prefix 'bfn/'");
    expect(() => createAwsScheduler({ client, ...OPTIONS, groupName: "" })).toThrow("schedule group name ''");
    expect(() => createAwsScheduler({ client, ...OPTIONS, namePrefix: "x".repeat(35) })).not.toThrow();
  });

  it("takes a real SchedulerClient (types only; nothing is sent)", () => {
    const real = new SchedulerClient({ region: "eu-central-1" });
    const options: AwsSchedulerOptions = { client: real, ...OPTIONS };
    expect(options.client).toBe(real);
    real.destroy();
  });
});
