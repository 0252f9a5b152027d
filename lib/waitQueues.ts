import { Aws } from "aws-cdk-lib";
import { type IRole, PolicyStatement } from "aws-cdk-lib/aws-iam";
import { acknowledge, acknowledgeWildcards } from "./nag";

/**
 * The waiting routes' wait queues (lambdas/runtime/aws/runEnds; docs/deploy.md, "Waiting for a
 * run"): made at run time by each route container that waits, `<prefix>-wait-<created>-<random>`,
 * so every grant is on that name pattern, and each role gets only its part: the waiting routes
 * make, read and delete their own, the recorder sends to them, the sweeper lists and deletes idle ones.
 */
export class WaitQueues {
  /** BROWSERFN_WAIT_QUEUE_URL_PREFIX: `https://sqs.<region>.<suffix>/<account>/<prefix>-wait-`. */
  readonly urlPrefix: string;
  /** `arn:<partition>:sqs:<region>:<account>:<prefix>-wait-*`: every wait queue of this stack, nothing else. */
  readonly arnPattern: string;

  constructor(prefix: string) {
    this.urlPrefix = `https://sqs.${Aws.REGION}.${Aws.URL_SUFFIX}/${Aws.ACCOUNT_ID}/${prefix}-wait-`;
    this.arnPattern = `arn:${Aws.PARTITION}:sqs:${Aws.REGION}:${Aws.ACCOUNT_ID}:${prefix}-wait-*`;
  }

  /** A waiting route: make its container's queue (tagged at creation), long-poll it, delete what it received, delete it when it rotates. */
  grantWait(role: IRole): void {
    role.addToPrincipalPolicy(
      new PolicyStatement({ actions: ["sqs:CreateQueue", "sqs:TagQueue", "sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:DeleteQueue"], resources: [this.arnPattern] }),
    );
    this.acknowledge(role);
  }

  /** The recorder: send a run's end notice to the queue its execution names. */
  grantNotify(role: IRole): void {
    role.addToPrincipalPolicy(new PolicyStatement({ actions: ["sqs:SendMessage"], resources: [this.arnPattern] }));
    this.acknowledge(role);
  }

  /** The sweeper: list the wait queues (ListQueues takes no resource) and delete idle ones; send the end of a run it ends (a failed or stopped execution). */
  grantSweep(role: IRole): void {
    role.addToPrincipalPolicy(new PolicyStatement({ actions: ["sqs:DeleteQueue", "sqs:SendMessage"], resources: [this.arnPattern] }));
    role.addToPrincipalPolicy(new PolicyStatement({ actions: ["sqs:ListQueues"], resources: ["*"] }));
    this.acknowledge(role);
    acknowledge(role, "AwsSolutions-IAM5[Resource::*]", "sqs:ListQueues has no resource-level permissions (AWS's design); the sweeper lists by the wait queues' name prefix and deletes only queues matching the wait queue pattern.");
  }

  private acknowledge(role: IRole): void {
    acknowledgeWildcards(role, [this.arnPattern], "Wait queues are made at run time, one per waiting route container, named <prefix>-wait-<created>-<random>: the name prefix is the narrowest scope.");
  }
}
