import { Aws, RemovalPolicy } from "aws-cdk-lib";
import { PolicyStatement, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import { ScheduleGroup } from "aws-cdk-lib/aws-scheduler";
import type { Queue } from "aws-cdk-lib/aws-sqs";
import { deadLetterQueue } from "./deadLetterQueue";
import { Construct } from "constructs";
import { acknowledgeWildcards } from "./nag";

export interface SchedulingProps {
  /** The schedule group's name. */
  groupName: string;
  /** Prepended to a function_id to name its schedule (the handlers' permission is scoped to it). */
  namePrefix: string;
}

/** What the handlers may do to schedules: what the EventBridge Scheduler adapter calls. */
export const SCHEDULE_ACTIONS = ["scheduler:CreateSchedule", "scheduler:UpdateSchedule", "scheduler:DeleteSchedule"];

/**
 * EventBridge Scheduler: the group holding one schedule per scheduled function, the role
 * Scheduler assumes to invoke the scheduled-run Lambda, and the dead-letter queue for
 * firings that could not be delivered (also the scheduled-run Lambda's on-failure destination).
 */
export class Scheduling extends Construct {
  readonly group: ScheduleGroup;
  readonly deadLetterQueue: Queue;
  readonly schedulerRole: Role;
  readonly namePrefix: string;
  private readonly scheduleArn: string;

  constructor(scope: Construct, id: string, props: SchedulingProps) {
    super(scope, id);
    this.namePrefix = props.namePrefix;
    // Deleted with the stack, whatever the tables' removal policy: deleting a group deletes its
    // schedules, which would otherwise go on firing at a scheduled-run Lambda that is gone, and
    // a kept group's name would fail the next deploy (docs/deploy.md, "Destroying and deploying
    // again", says how a reattached function gets its schedule back).
    this.group = new ScheduleGroup(this, "Group", { scheduleGroupName: props.groupName, removalPolicy: RemovalPolicy.DESTROY });
    this.scheduleArn = `arn:${Aws.PARTITION}:scheduler:${Aws.REGION}:${Aws.ACCOUNT_ID}:schedule/${props.groupName}/${props.namePrefix}*`;

    this.deadLetterQueue = deadLetterQueue(
      this,
      "DeadLetterQueue",
      "This queue is itself the dead-letter queue: of the EventBridge Scheduler schedules (set per schedule at run time, so cdk-nag cannot see it) and of the scheduled-run Lambda's failed async invocations.",
    );

    this.schedulerRole = new Role(this, "SchedulerRole", {
      assumedBy: new ServicePrincipal("scheduler.amazonaws.com", {
        conditions: { StringEquals: { "aws:SourceAccount": Aws.ACCOUNT_ID } },
      }),
      description: "Assumed by EventBridge Scheduler to invoke the scheduled-run Lambda (and dead-letter what it cannot deliver)",
    });
    this.deadLetterQueue.grantSendMessages(this.schedulerRole);
  }

  /** The scheduled-run Lambda: the only thing Scheduler may invoke. */
  allowTarget(target: IFunction): void {
    this.schedulerRole.addToPolicy(new PolicyStatement({ actions: ["lambda:InvokeFunction"], resources: [target.functionArn] }));
  }

  /** Create, update and delete the functions' schedules in the group; pass them the scheduler role. */
  grantManage(role: Role): void {
    role.addToPolicy(new PolicyStatement({ actions: SCHEDULE_ACTIONS, resources: [this.scheduleArn] }));
    role.addToPolicy(
      new PolicyStatement({
        actions: ["iam:PassRole"],
        resources: [this.schedulerRole.roleArn],
        conditions: { StringEquals: { "iam:PassedToService": "scheduler.amazonaws.com" } },
      }),
    );
    acknowledgeWildcards(
      role,
      [this.scheduleArn],
      "Schedules are created at run time, one per scheduled function, named <namePrefix><function id> in browserfn's own group: they cannot be listed in the template, so the group and name prefix are the narrowest scope.",
    );
  }
}
