import { Aws, Duration, RemovalPolicy } from "aws-cdk-lib";
import { Alarm, ComparisonOperator, type IMetric, Metric, TreatMissingData } from "aws-cdk-lib/aws-cloudwatch";
import { Rule, Schedule } from "aws-cdk-lib/aws-events";
import { LambdaFunction } from "aws-cdk-lib/aws-events-targets";
import { type IRole, PolicyStatement } from "aws-cdk-lib/aws-iam";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import { LogGroup, type RetentionDays } from "aws-cdk-lib/aws-logs";
import { BlockPublicAccess, Bucket, BucketEncryption, HttpMethods } from "aws-cdk-lib/aws-s3";
import type { Queue } from "aws-cdk-lib/aws-sqs";
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from "aws-cdk-lib/aws-stepfunctions";
import { Construct } from "constructs";
import { runWorkflowDefinition, WORKFLOW_SUBSTITUTIONS } from "../lambdas/runtime/aws/runWorkflow";
import { ARTIFACT_PREFIX, OUTCOME_PREFIX } from "../lambdas/runtime/aws/outcomeBucket";
import { PROFILE_PREFIX } from "../lambdas/profiles/aws/profileKeys";
import type { SecretsKey } from "./secretsKey";
import { LIVE_PREFIX } from "../lambdas/live/aws/liveUploads";
import { SWEPT_RUNS_METRIC } from "../lambdas/runtime/aws/sweptRunsMetric";
import { deadLetterQueue } from "./deadLetterQueue";
import { acknowledge, acknowledgeWildcards } from "./nag";

export interface RunPipelineProps {
  /** The state machine's name: its ARN is known before it exists (stateMachineArn), so the handlers can be given it. */
  stateMachineName: string;
  /** The stack's prefix: the dimension of the sweeper's metric (its Lambda names it by its table prefix, the same). */
  prefix: string;
  /** How long uploaded outcomes are kept: a day is far beyond any recorder's retries. */
  outcomeExpiration?: Duration;
  /** How long runs' artifacts are kept. */
  artifactExpiration: Duration;
  logRetention: RetentionDays;
  removalPolicy: RemovalPolicy;
}

/** The Lambdas the workflow needs, created after the pipeline's bucket (their environment names it). */
export interface RunPipelineLambdas {
  /** The recorder Lambda: the workflow's Record state invokes it. */
  recorder: IFunction;
  /** The sweeper Lambda: on its schedule, and for executions that end unrecorded. */
  sweeper: IFunction;
  /** The per-function Lambdas (`function:<prefix>*` and its qualified form): the workflow invokes them. */
  functionArns: string[];
}

/** How often the sweeper looks for runs past their deadline. */
export const SWEEP_INTERVAL = Duration.minutes(5);

/** The state machine's ARN from its name, for the handlers that start it (no reference, no cycle). */
export function stateMachineArnOf(name: string): string {
  return `arn:${Aws.PARTITION}:states:${Aws.REGION}:${Aws.ACCOUNT_ID}:stateMachine:${name}`;
}

/**
 * The AWS run pipeline (shared/DESIGN.md): the run workflow, a Step Functions Standard state
 * machine (lambdas/runtime/aws/runWorkflow.ts) that invokes each run's Lambda and has the
 * recorder write its end; the run bucket (outcomes too big for the workflow, through presigned
 * URLs; private, encrypted, expiring); the dead-letter queue of runs the recorder could not
 * record; the sweeper's schedule and its rule for executions that end unrecorded; and alarms
 * on both. The per-function Lambdas' role gets nothing here: only the workflow may invoke the
 * recorder.
 */
export class RunPipeline extends Construct {
  readonly bucket: Bucket;
  readonly deadLetterQueue: Queue;
  /** Known before the state machine is made (`connect`). */
  readonly stateMachineArn: string;
  stateMachine?: StateMachine;
  alarms: Alarm[] = [];

  constructor(
    scope: Construct,
    id: string,
    private readonly props: RunPipelineProps,
  ) {
    super(scope, id);
    this.stateMachineArn = stateMachineArnOf(props.stateMachineName);
    this.bucket = new Bucket(this, "RunBucket", {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      versioned: false,
      // The dashboard fetches artifact downloads (presigned GET URLs the API redirects to): a
      // signature is needed all the same, so any origin may read with one.
      cors: [{ allowedMethods: [HttpMethods.GET], allowedOrigins: ["*"], maxAge: 3600 }],
      lifecycleRules: [
        { id: "expire-outcomes", prefix: OUTCOME_PREFIX, expiration: props.outcomeExpiration ?? Duration.days(1) },
        { id: "expire-artifacts", prefix: ARTIFACT_PREFIX, expiration: props.artifactExpiration },
        // The live view's latest frame and watch marker of each run (lambdas/live/aws): a day is plenty.
        { id: "expire-live", prefix: LIVE_PREFIX, expiration: Duration.days(1) },
        { id: "abort-incomplete-uploads", abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
      removalPolicy: props.removalPolicy,
    });
    acknowledge(
      this.bucket,
      "AwsSolutions-S1",
      "The run bucket holds transient run outcomes written through presigned URLs and read once by the recorder; they expire within a day. Every access is by the service's own roles (CloudTrail records them); server access logs would add a second bucket of logs about objects that no longer exist.",
    );

    this.deadLetterQueue = deadLetterQueue(
      this,
      "RunDeadLetters",
      "This queue is itself the dead-letter queue of the run pipeline: runs the recorder could not record, and sweeper events EventBridge could not deliver or the sweeper could not handle.",
    );
  }

  /** The run workflow, the sweeper's rules and the alarms. */
  connect(lambdas: RunPipelineLambdas): StateMachine {
    const props = { ...this.props, ...lambdas };

    const logGroup = new LogGroup(this, "WorkflowLogs", {
      logGroupName: `/aws/vendedlogs/states/${props.stateMachineName}`,
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const stateMachine = new StateMachine(this, "RunWorkflow", {
      stateMachineName: props.stateMachineName,
      stateMachineType: StateMachineType.STANDARD,
      definitionBody: DefinitionBody.fromString(JSON.stringify(runWorkflowDefinition())),
      definitionSubstitutions: {
        [WORKFLOW_SUBSTITUTIONS.recorderArn]: props.recorder.functionArn,
        [WORKFLOW_SUBSTITUTIONS.deadLetterUrl]: this.deadLetterQueue.queueUrl,
      },
      // Every event, but without its data: a run's parameters and results stay out of the logs.
      logs: { destination: logGroup, level: LogLevel.ALL, includeExecutionData: false },
      tracingEnabled: true,
    });
    this.stateMachine = stateMachine;
    const role = stateMachine.role;
    role.addToPrincipalPolicy(new PolicyStatement({ actions: ["lambda:InvokeFunction"], resources: [...props.functionArns, props.recorder.functionArn] }));
    this.deadLetterQueue.grantSendMessages(role);
    acknowledgeWildcards(
      role,
      props.functionArns,
      "The workflow invokes the per-function Lambdas, which are created at run time, one per deployed function, named <functionPrefix><function id>: the function prefix is the narrowest scope (`:*` covers their version aliases).",
    );
    acknowledge(
      role,
      "AwsSolutions-IAM5[Resource::*]",
      "The workflow's X-Ray tracing (xray:PutTraceSegments and its kin) and its CloudWatch Logs delivery (logs:CreateLogDelivery and its kin) take no resource ARN: CDK's own grants for tracingEnabled and logs.",
    );

    // The sweeper: every SWEEP_INTERVAL, and at once when an execution ends without recording its run.
    new Rule(this, "SweepSchedule", {
      description: "browserfn: end runs still active past their deadline",
      schedule: Schedule.rate(SWEEP_INTERVAL),
      targets: [new LambdaFunction(props.sweeper, { retryAttempts: 2 })],
    });
    new Rule(this, "UnrecordedRuns", {
      description: "browserfn: a run workflow execution that failed, timed out or was stopped ends its run",
      eventPattern: {
        source: ["aws.states"],
        detailType: ["Step Functions Execution Status Change"],
        detail: { status: ["FAILED", "TIMED_OUT", "ABORTED"], stateMachineArn: [stateMachine.stateMachineArn] },
      },
      targets: [new LambdaFunction(props.sweeper, { retryAttempts: 20, maxEventAge: Duration.hours(6), deadLetterQueue: this.deadLetterQueue })],
    });

    const period = Duration.minutes(5);
    /** Fires on one or more in a period; no data (nothing happened) is fine. */
    const anyOf = (id: string, alarmDescription: string, metric: IMetric) =>
      new Alarm(this, id, {
        alarmDescription,
        metric,
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
    this.alarms = [
      anyOf(
        "TimedOutExecutionsAlarm",
        "browserfn: a run workflow execution timed out (its run was ended by the sweeper, without its outcome)",
        stateMachine.metricTimedOut({ period, statistic: "Sum" }),
      ),
      anyOf(
        "AbortedExecutionsAlarm",
        "browserfn: a run workflow execution was stopped (its run was ended by the sweeper, without its outcome)",
        stateMachine.metricAborted({ period, statistic: "Sum" }),
      ),
      anyOf(
        "SweptRunsAlarm",
        "browserfn: the sweeper ended runs past their deadline (no workflow recorded them: a start lost, or an execution that never ended)",
        new Metric({
          namespace: SWEPT_RUNS_METRIC.namespace,
          metricName: SWEPT_RUNS_METRIC.name,
          dimensionsMap: { [SWEPT_RUNS_METRIC.dimension]: props.prefix },
          period,
          statistic: "Sum",
        }),
      ),
      new Alarm(this, "UnrecordedRunsAlarm", {
        alarmDescription: "browserfn: a run workflow execution failed (its run was ended by the sweeper, without its outcome)",
        metric: stateMachine.metricFailed({ period: Duration.minutes(5), statistic: "Sum" }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
      new Alarm(this, "DeadLettersAlarm", {
        alarmDescription: "browserfn: the dead-letter queue holds messages (an unrecorded run, or a sweeper event not delivered or not handled)",
        metric: this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: "Maximum" }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    ];
    return stateMachine;
  }

  /** The objects under `outcomes/`: everything a run uploads (its outcome and artifact slots, under `outcomes/<run id>/`). */
  get outcomeObjects(): string {
    return this.bucket.arnForObjects(`${OUTCOME_PREFIX}*`);
  }

  /** The objects under `artifacts/`: every run's artifacts. */
  get artifactObjects(): string {
    return this.bucket.arnForObjects(`${ARTIFACT_PREFIX}*`);
  }

  /** The objects under `profiles/`: profiles' states (lambdas/profiles/aws), kept until their profile is deleted. */
  get profileObjects(): string {
    return this.bucket.arnForObjects(`${PROFILE_PREFIX}*`);
  }

  /**
   * Sign the URLs of a run's profiles before it starts: a presigned GET of a current state and
   * a presigned POST of a new one act with their signer's permissions, S3's own call to KMS
   * included (SSE-KMS with the stack's key: kms:GenerateDataKey to write, kms:Decrypt to read,
   * only through S3 and only for objects under `profiles/`). Every role that starts runs.
   */
  grantSignProfiles(grantee: IRole, key: SecretsKey): void {
    grantee.addToPrincipalPolicy(new PolicyStatement({ actions: ["s3:GetObject", "s3:PutObject"], resources: [this.profileObjects] }));
    key.grantThroughS3(grantee, this.profileObjects, ["kms:Decrypt", "kms:GenerateDataKey"]);
    acknowledgeWildcards(grantee, [this.profileObjects], PROFILE_OBJECTS_REASON);
  }

  /** Delete profiles' state objects: saves a run made that were not adopted, states replaced (the recorder, the sweeper) or whose profile is deleted. */
  grantDeleteProfileStates(grantee: IRole): void {
    grantee.addToPrincipalPolicy(new PolicyStatement({ actions: ["s3:DeleteObject"], resources: [this.profileObjects] }));
    acknowledgeWildcards(grantee, [this.profileObjects], PROFILE_OBJECTS_REASON);
  }

  /** The live view's frames: each run's latest frame, `live/<run id>/latest.jpg`. */
  get liveFrameObjects(): string {
    return this.bucket.arnForObjects(`${LIVE_PREFIX}*/latest.jpg`);
  }

  /** The live view's watch markers, `live/<run id>/watch`. */
  get liveWatchObjects(): string {
    return this.bucket.arnForObjects(`${LIVE_PREFIX}*/watch`);
  }

  /**
   * Watch runs live (GET /runs/{run_id}/live): write a run's watch marker, read its latest frame.
   * Nothing else of the bucket.
   */
  grantWatchLive(grantee: IRole): void {
    grantee.addToPrincipalPolicy(new PolicyStatement({ actions: ["s3:PutObject"], resources: [this.liveWatchObjects] }));
    grantee.addToPrincipalPolicy(new PolicyStatement({ actions: ["s3:GetObject"], resources: [this.liveFrameObjects] }));
    acknowledgeWildcards(grantee, [this.liveWatchObjects, this.liveFrameObjects], LIVE_OBJECTS_REASON);
  }

  /** Sign download URLs of artifacts (the API's 302s). */
  grantDownloadArtifacts(grantee: IRole): void {
    grantee.addToPrincipalPolicy(new PolicyStatement({ actions: ["s3:GetObject"], resources: [this.artifactObjects] }));
    acknowledgeWildcards(grantee, [this.artifactObjects], ARTIFACT_OBJECTS_REASON);
  }

  /**
   * Start run workflows and sign the runs' upload forms (a presigned POST carries its signer's
   * permission: the signer needs s3:PutObject on the key; every key is under `outcomes/`). The
   * route handlers and the scheduled-run Lambda start runs.
   */
  grantStartRuns(grantee: IRole): void {
    grantee.addToPrincipalPolicy(new PolicyStatement({ actions: ["states:StartExecution"], resources: [this.stateMachineArn] }));
    grantee.addToPrincipalPolicy(new PolicyStatement({ actions: ["s3:PutObject"], resources: [this.outcomeObjects] }));
    acknowledgeWildcards(grantee, [this.outcomeObjects], OUTCOME_OBJECTS_REASON);
    // The live view's URLs in the run's event: its frame's POST (PutObject) and its watch marker's HEAD (GetObject).
    grantee.addToPrincipalPolicy(new PolicyStatement({ actions: ["s3:PutObject"], resources: [this.liveFrameObjects] }));
    grantee.addToPrincipalPolicy(new PolicyStatement({ actions: ["s3:GetObject"], resources: [this.liveWatchObjects] }));
    acknowledgeWildcards(grantee, [this.liveFrameObjects, this.liveWatchObjects], LIVE_OBJECTS_REASON);
  }

  /**
   * Stop run workflows (POST /runs/{run_id}/cancel): the executions of the stack's own run
   * workflow, each named after its run.
   */
  grantStopRuns(grantee: IRole): void {
    const executions = `arn:${Aws.PARTITION}:states:${Aws.REGION}:${Aws.ACCOUNT_ID}:execution:${this.props.stateMachineName}:*`;
    grantee.addToPrincipalPolicy(new PolicyStatement({ actions: ["states:StopExecution"], resources: [executions] }));
    acknowledgeWildcards(grantee, [executions], EXECUTIONS_REASON);
  }

  /**
   * Read a run's execution (DescribeExecution): the recorder reads a failed attempt's
   * parameters back from its execution's input to queue the run's next attempt (retries).
   */
  grantReadRunExecutions(grantee: IRole): void {
    const executions = `arn:${Aws.PARTITION}:states:${Aws.REGION}:${Aws.ACCOUNT_ID}:execution:${this.props.stateMachineName}:*`;
    grantee.addToPrincipalPolicy(new PolicyStatement({ actions: ["states:DescribeExecution"], resources: [executions] }));
    acknowledgeWildcards(grantee, [executions], EXECUTIONS_REASON);
  }

  /**
   * Read what runs uploaded (outcomes, artifact slots: their size and type), copy the artifacts
   * a run keeps to `artifacts/`, and delete each run's uploads once it is recorded (the recorder).
   */
  grantReadOutcomes(grantee: IRole): void {
    grantee.addToPrincipalPolicy(new PolicyStatement({ actions: ["s3:GetObject", "s3:DeleteObject"], resources: [this.outcomeObjects] }));
    grantee.addToPrincipalPolicy(new PolicyStatement({ actions: ["s3:PutObject"], resources: [this.artifactObjects] }));
    acknowledgeWildcards(grantee, [this.outcomeObjects], OUTCOME_OBJECTS_REASON);
    acknowledgeWildcards(grantee, [this.artifactObjects], ARTIFACT_OBJECTS_REASON);
  }
}

const EXECUTIONS_REASON =
  "Each run's workflow execution is named after its run id at run time: the executions of the stack's own run workflow are the narrowest scope.";

const OUTCOME_OBJECTS_REASON =
  "Each run's uploads are named outcomes/<run id>/… at run time: the outcomes/ prefix of the stack's own run bucket is the narrowest scope.";

const PROFILE_OBJECTS_REASON =
  "Each profile's state is an object named profiles/<account hash>/<profile>/<run id>.json at run time: the profiles/ prefix of the stack's own run bucket is the narrowest scope.";

const LIVE_OBJECTS_REASON =
  "Each run's live frame and watch marker are named live/<run id>/latest.jpg and live/<run id>/watch at run time: those names under the live/ prefix of the stack's own run bucket are the narrowest scope.";

const ARTIFACT_OBJECTS_REASON =
  "Each run's artifacts are named artifacts/<run id>/<name> at run time: the artifacts/ prefix of the stack's own run bucket is the narrowest scope.";
