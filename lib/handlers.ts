import { Aws, Duration, Fn } from "aws-cdk-lib";
import type { TableV2 } from "aws-cdk-lib/aws-dynamodb";
import { type IRole, PolicyStatement, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import { LambdaDestination, SqsDestination } from "aws-cdk-lib/aws-lambda-destinations";
import type { NodejsFunction } from "aws-cdk-lib/aws-lambda-nodejs";
import type { ILogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import { Construct } from "constructs";
import { AWS_ENV } from "../lambdas/aws/awsConfig";
import type { RouteSpec } from "../lambdas/routes/routeSpecs";
import { ROUTE_SPECS } from "../lambdas/routes/routeSpecs";
import { DEPLOY_JOB_MAX_EVENT_AGE_MS, DEPLOY_JOB_RETRY_ATTEMPTS, DEPLOY_JOB_TIMEOUT_MS } from "../lambdas/functions/deployLimits";
import { ACTIVE_INDEX, DEPLOYING_INDEX } from "../lambdas/store/tables";
import type { FunctionRuntime } from "./functionRuntime";
import { createHandlerFunction, grantLogWrites, HANDLER_RUNTIME, type HandlerFunctionProps } from "./handlerFunction";
import { acknowledge, acknowledgeWildcards } from "./nag";
import { grantRouteGroups, ROUTE_GROUP_NAMES, ROUTE_GROUPS, routeGroupOf, type RouteGroup } from "./routeRoles";
import type { OAuthServer } from "./oauthServer";
import type { RunPipeline } from "./runPipeline";
import type { Scheduling } from "./scheduling";
import { WEBHOOK_DELIVERY_TIMEOUT, type WebhookDelivery } from "./webhookDelivery";
import type { StackSettings } from "./stackSettings";
import type { SecretsKey } from "./secretsKey";
import { DATA_ACTIONS, RECORDER_DATA_ACTIONS, DEPLOY_JOB_DATA_ACTIONS, SWEEPER_DATA_ACTIONS, WEBHOOK_DELIVERY_DATA_ACTIONS, AUTHORIZER_DATA_ACTIONS, grantTableActions, handlerFunctionNames, PUT_PARTITIONS } from "./handlerGrants";
import { RECORDER_LAMBDA_TIMEOUT_SECONDS } from "../lambdas/runtime/aws/runWorkflow";
import { WaitQueues } from "./waitQueues";

export interface HandlersProps {
  settings: StackSettings;
  table: TableV2;
  /** Index names of the table (each gets the same data access as the table). */
  indexNames: string[];
  runtime: FunctionRuntime;
  scheduling: Scheduling;
  oauth: OAuthServer;
  /** The run workflow's bucket and queue; connected here to the recorder and the sweeper. */
  pipeline: RunPipeline;
  /** The KMS key of function secrets and webhook signing secrets. */
  secretsKey: SecretsKey;
  /** The webhook delivery queue; connected here to its consumer and to whoever records runs' ends. */
  webhooks: WebhookDelivery;
}

/**
 * browserfn's own Lambdas, each bundled from its entry in lambdas/aws/entries: one per route,
 * the authorizer, the `$default` route, the scheduled-run target, the run recorder (the run
 * workflow's Record state: it writes how each run ended) and the run sweeper. Roles by need:
 * the authenticated routes one per group of routes that touch the same things
 * (lib/routeRoles.ts), the open routes one with logs only, the authorizer one that reads keys, the
 * scheduled-run target one that records and starts runs, the recorder one that writes runs'
 * ends and reads uploaded outcomes, the sweeper one that ends overdue runs (the table only).
 */
export class Handlers extends Construct {
  readonly routes: { spec: RouteSpec; handler: NodejsFunction }[] = [];
  readonly authorizer: NodejsFunction;
  readonly routeNotFound: NodejsFunction;
  readonly scheduledRun: NodejsFunction;
  readonly runRecorder: NodejsFunction;
  readonly runSweeper: NodejsFunction;
  readonly deployJob: NodejsFunction;
  readonly webhookDelivery: NodejsFunction;
  readonly roles: { routes: Record<RouteGroup, Role>; open: Role; authorizer: Role; scheduledRun: Role; runRecorder: Role; runSweeper: Role; deployJob: Role; webhookDelivery: Role };

  constructor(scope: Construct, id: string, props: HandlersProps) {
    super(scope, id);
    const { settings } = props;
    const names = handlerFunctionNames(settings.prefix);
    const logRetention = settings.logRetentionDays as RetentionDays;
    const role = (roleId: string, description: string) =>
      new Role(this, roleId, { assumedBy: new ServicePrincipal("lambda.amazonaws.com"), description });
    this.roles = {
      // One role per group of authenticated routes, by what they touch (lib/routeRoles.ts).
      routes: Object.fromEntries(
        ROUTE_GROUP_NAMES.map((group) => [group, role(`Routes${group[0]?.toUpperCase()}${group.slice(1)}Role`, `browserfn authenticated routes (${group}): ${ROUTE_GROUPS[group].join(", ")}`.slice(0, 1000))]),
      ) as Record<RouteGroup, Role>,
      open: role("OpenRole", "browserfn open routes (health, OpenAPI, unmatched routes): logs only"),
      authorizer: role("AuthorizerRole", "browserfn Lambda authorizer: reads API keys and accounts"),
      scheduledRun: role("ScheduledRunRole", "browserfn scheduled-run target: records runs, starts their workflows"),
      runRecorder: role("RunRecorderRole", "browserfn run recorder: records how runs ended (the table, uploaded outcomes), starts queued runs"),
      runSweeper: role("RunSweeperRole", "browserfn run sweeper: ends runs past their deadline, starts queued runs no release started"),
      deployJob: role("DeployJobRole", "browserfn deploy job: provisions a function's Lambda and records the outcome"),
      webhookDelivery: role("WebhookDeliveryRole", "browserfn webhook delivery: signs and sends runs' ends to webhooks, records each attempt"),
    };
    const tableResources = [props.table.tableArn, ...props.indexNames.map((name) => `${props.table.tableArn}/index/${name}`)];
    for (const grantee of [...Object.values(this.roles.routes), this.roles.scheduledRun]) {
      grantee.addToPolicy(new PolicyStatement({ actions: DATA_ACTIONS, resources: tableResources }));
    }
    grantTableActions(this.roles.authorizer, AUTHORIZER_DATA_ACTIONS, [props.table.tableArn], PUT_PARTITIONS.authorizer);
    // gsi1: the function of an ending run (its webhooks), found by function_id.
    grantTableActions(this.roles.runRecorder, RECORDER_DATA_ACTIONS, [props.table.tableArn, `${props.table.tableArn}/index/${ACTIVE_INDEX}`], PUT_PARTITIONS.recorder);
    // The deploying index too: the sweeper finds functions stuck deploying there.
    const sweeperIndexes = [ACTIVE_INDEX, DEPLOYING_INDEX].map((index) => `${props.table.tableArn}/index/${index}`);
    grantTableActions(this.roles.runSweeper, SWEEPER_DATA_ACTIONS, [props.table.tableArn, ...sweeperIndexes], PUT_PARTITIONS.recorder);
    this.roles.deployJob.addToPolicy(new PolicyStatement({ actions: DEPLOY_JOB_DATA_ACTIONS, resources: [props.table.tableArn] }));
    grantTableActions(this.roles.webhookDelivery, WEBHOOK_DELIVERY_DATA_ACTIONS, [props.table.tableArn, `${props.table.tableArn}/index/${ACTIVE_INDEX}`], PUT_PARTITIONS.webhookDelivery);
    // Secrets: the routes seal and open (function secrets, webhook signing secrets), the recorder
    // opens (it redacts secret values from outcomes), the delivery Lambda opens signing secrets,
    // and each function's Lambda opens only what was sealed for its own runs.
    props.secretsKey.grantOpen(this.roles.runRecorder);
    props.secretsKey.grantOpen(this.roles.webhookDelivery);
    props.secretsKey.grantRunnerOpen(props.runtime.executionRole);
    for (const sender of [this.roles.scheduledRun, this.roles.runRecorder, this.roles.runSweeper]) props.webhooks.grantEnqueue(sender);
    props.runtime.grantControl(this.roles.deployJob);
    const deployJobArn = `arn:${Aws.PARTITION}:lambda:${Aws.REGION}:${Aws.ACCOUNT_ID}:function:${names.deployJob}`;
    // The waiting routes' wait queues: the routes wait on them (routeRoles.ts), the recorder notifies, the sweeper deletes idle ones.
    const waitQueues = new WaitQueues(settings.prefix);
    grantRouteGroups(this.roles.routes, { ...props, deployJobArn, waitQueues });
    waitQueues.grantNotify(this.roles.runRecorder);
    waitQueues.grantSweep(this.roles.runSweeper);
    const waitEnv = { [AWS_ENV.waitQueueUrlPrefix]: waitQueues.urlPrefix };
    props.pipeline.grantStartRuns(this.roles.scheduledRun);
    props.pipeline.grantReadOutcomes(this.roles.runRecorder);
    // A retry: the failed attempt's parameters, read back from its execution's input.
    props.pipeline.grantReadRunExecutions(this.roles.runRecorder);
    // The run queue's dispatchers besides the routes: the recorder after each release, the
    // sweeper as recovery. Each starts queued runs (StartExecution of the run workflow, its
    // upload URLs presigned) and opens their secrets (values redacted from the run's record).
    props.pipeline.grantStartRuns(this.roles.runRecorder);
    props.pipeline.grantStartRuns(this.roles.runSweeper);
    // Profiles (lambdas/profiles/aws): whoever starts runs signs their profiles' URLs; the
    // recorder reads a run's saves, and it and the sweeper delete what is not (or no longer) kept.
    for (const starter of [this.roles.scheduledRun, this.roles.runRecorder, this.roles.runSweeper]) props.pipeline.grantSignProfiles(starter, props.secretsKey);
    for (const ender of [this.roles.runRecorder, this.roles.runSweeper]) props.pipeline.grantDeleteProfileStates(ender);
    props.secretsKey.grantOpen(this.roles.runSweeper);
    // A scheduled run opens its function's secrets (their values are redacted from the run's record).
    props.secretsKey.grantOpen(this.roles.scheduledRun);
    // Every run starter seals a run's secrets under the function's data key (lambdas/secrets/runEnvelope).
    for (const starter of [this.roles.scheduledRun, this.roles.runRecorder, this.roles.runSweeper]) props.secretsKey.grantRunDataKeys(starter);

    const identityEnv: Record<string, string> = {
      [AWS_ENV.tablePrefix]: settings.prefix,
      [AWS_ENV.runRetentionDays]: String(settings.runRetentionDays),
      [AWS_ENV.artifactRetentionDays]: String(settings.artifactRetentionDays),
      [AWS_ENV.defaultPlan]: settings.defaultPlan,
      [AWS_ENV.oauthIssuer]: props.oauth.issuer,
      [AWS_ENV.oauthJwksUrl]: props.oauth.jwksUrl,
      [AWS_ENV.oauthClientIds]: Fn.join(",", [props.oauth.machineClient.userPoolClientId, props.oauth.webClient.userPoolClientId]),
    };
    const serviceEnv: Record<string, string> = {
      ...identityEnv,
      [AWS_ENV.plans]: JSON.stringify(settings.plans),
      [AWS_ENV.syncWaitSeconds]: String(settings.syncWaitSeconds),
      [AWS_ENV.functionPrefix]: settings.functionPrefix,
      [AWS_ENV.executionRoleArn]: props.runtime.executionRole.roleArn,
      [AWS_ENV.executionRoleId]: props.runtime.executionRole.roleId,
      [AWS_ENV.layerArns]: Fn.join(",", props.runtime.layerArns),
      [AWS_ENV.stateMachineArn]: props.pipeline.stateMachineArn,
      [AWS_ENV.runBucket]: props.pipeline.bucket.bucketName,
      [AWS_ENV.secretsKeyArn]: props.secretsKey.key.keyArn,
      [AWS_ENV.webhookQueueUrl]: props.webhooks.queue.queueUrl,
      [AWS_ENV.functionLogGroup]: props.runtime.logGroup.logGroupName,
      [AWS_ENV.scheduleGroup]: props.scheduling.group.scheduleGroupName,
      [AWS_ENV.scheduleNamePrefix]: props.scheduling.namePrefix,
      // By name, not by reference: the scheduled-run Lambda's own environment holds it too.
      [AWS_ENV.scheduleTargetArn]: `arn:${Aws.PARTITION}:lambda:${Aws.REGION}:${Aws.ACCOUNT_ID}:function:${names.scheduledRun}`,
      [AWS_ENV.scheduleRoleArn]: props.scheduling.schedulerRole.roleArn,
      [AWS_ENV.scheduleDeadLetterArn]: props.scheduling.deadLetterQueue.queueArn,
      // By name, not by reference: the deploy job's own environment holds it too.
      [AWS_ENV.deployJobFunction]: names.deployJob,
      ...(settings.functionMaxMemoryMb === null ? {} : { [AWS_ENV.maxFunctionMemoryMb]: String(settings.functionMaxMemoryMb) }),
    };

    const logGroups = new Map<IRole, ILogGroup[]>();
    const handler = (handlerId: string, handlerProps: HandlerFunctionProps): NodejsFunction => {
      const { fn, logGroup } = createHandlerFunction(this, handlerId, handlerProps);
      logGroups.set(handlerProps.role, [...(logGroups.get(handlerProps.role) ?? []), logGroup]);
      return fn;
    };
    for (const spec of ROUTE_SPECS) {
      const fn = handler(`Route-${spec.operationId}`, {
        entry: spec.operationId,
        functionName: names.route(spec),
        description: `browserfn ${spec.method} ${spec.path}: ${spec.summary}`.slice(0, 256),
        role: spec.auth ? this.roles.routes[routeGroupOf(spec)] : this.roles.open,
        // Only the routes that wait for runs have wait queues (and the grant: routeRoles.ts).
        environment: spec.auth && routeGroupOf(spec) === "invoke" ? { ...serviceEnv, ...waitEnv } : serviceEnv,
        logRetention,
        files: (spec as RouteSpec).files,
        // Its analysis worker may take the budget's 512 MB of heap beside the handler's own.
        ...((spec as RouteSpec).analyzesCode ? { analysisWorker: true, memorySize: 1024 } : {}),
      });
      this.routes.push({ spec, handler: fn });
    }
    this.authorizer = handler("Authorizer", {
      entry: "authorizer",
      functionName: names.authorizer,
      description: "browserfn Lambda authorizer: API keys and OAuth access tokens",
      role: this.roles.authorizer,
      environment: identityEnv,
      logRetention,
      timeout: Duration.seconds(10),
    });
    this.routeNotFound = handler("RouteNotFound", {
      entry: "routeNotFound",
      functionName: names.routeNotFound,
      description: "browserfn $default route: 404 route_not_found / 405 method_not_allowed in the API's JSON shape",
      role: this.roles.open,
      environment: {},
      logRetention,
      timeout: Duration.seconds(5),
      memorySize: 256,
    });
    this.scheduledRun = handler("ScheduledRun", {
      entry: "scheduledRun",
      functionName: names.scheduledRun,
      description: "browserfn scheduled-run target of EventBridge Scheduler: one firing, waits for the run",
      role: this.roles.scheduledRun,
      environment: serviceEnv,
      logRetention,
      // A run may take the longest function timeout (900 s); this is Lambda's ceiling.
      timeout: Duration.minutes(15),
    });
    // No retries: the firing's claim of (function_id, scheduled_for) makes a retry a no-op.
    this.scheduledRun.configureAsyncInvoke({
      retryAttempts: 0,
      maxEventAge: Duration.hours(1),
      onFailure: new SqsDestination(props.scheduling.deadLetterQueue),
    });
    props.scheduling.allowTarget(this.scheduledRun);
    const storeEnv = {
      [AWS_ENV.tablePrefix]: settings.prefix,
      [AWS_ENV.runRetentionDays]: String(settings.runRetentionDays),
      [AWS_ENV.artifactRetentionDays]: String(settings.artifactRetentionDays),
    };
    // What starting a queued run needs (awsConfig.ts, DispatchEnv): the recorder and the sweeper dispatch the run queue.
    const dispatchEnv = {
      ...storeEnv,
      [AWS_ENV.plans]: JSON.stringify(settings.plans),
      [AWS_ENV.stateMachineArn]: props.pipeline.stateMachineArn,
      [AWS_ENV.runBucket]: props.pipeline.bucket.bucketName,
      [AWS_ENV.secretsKeyArn]: props.secretsKey.key.keyArn,
      [AWS_ENV.functionPrefix]: settings.functionPrefix,
      [AWS_ENV.executionRoleId]: props.runtime.executionRole.roleId,
    };
    this.runRecorder = handler("RunRecorder", {
      entry: "runRecorder",
      functionName: names.runRecorder,
      description: "browserfn run recorder: the run workflow's Record state, writes each run's end",
      role: this.roles.runRecorder,
      environment: {
        ...dispatchEnv,
        ...waitEnv,
        [AWS_ENV.webhookQueueUrl]: props.webhooks.queue.queueUrl,
      },
      logRetention,
      // Shorter than the Record state's timeout (runWorkflow.ts): an attempt Lambda stopped is over before the next.
      timeout: Duration.seconds(RECORDER_LAMBDA_TIMEOUT_SECONDS),
      // An uploaded outcome is read whole (up to ~13 MB) and parsed.
      memorySize: 512,
    });
    this.runSweeper = handler("RunSweeper", {
      entry: "runSweeper",
      functionName: names.runSweeper,
      description: "browserfn run sweeper: ends runs past their deadline, and runs whose workflow ended unrecorded",
      role: this.roles.runSweeper,
      environment: { ...dispatchEnv, ...waitEnv, [AWS_ENV.webhookQueueUrl]: props.webhooks.queue.queueUrl },
      logRetention,
      timeout: Duration.minutes(5),
      memorySize: 256,
    });
    this.deployJob = handler("DeployJob", {
      entry: "deployJob",
      functionName: names.deployJob,
      description: "browserfn deploy job: creates or updates a function's Lambda off the request path, records active or failed",
      role: this.roles.deployJob,
      environment: serviceEnv,
      logRetention,
      // Lambda's ceiling: a deploy waits for the function to become Active (STALE_DEPLOY_MS counts on it).
      timeout: Duration.millis(DEPLOY_JOB_TIMEOUT_MS),
    });
    // A job that throws (the store or Lambda's control plane away) is run again; it is
    // idempotent. One that fails every attempt, or is not run within the event age, goes to the
    // sweeper, which marks its function failed. These bound STALE_DEPLOY_MS (deployLimits.ts).
    this.deployJob.configureAsyncInvoke({
      retryAttempts: DEPLOY_JOB_RETRY_ATTEMPTS,
      maxEventAge: Duration.millis(DEPLOY_JOB_MAX_EVENT_AGE_MS),
      onFailure: new LambdaDestination(this.runSweeper, { responseOnly: false }),
    });
    acknowledgeWildcards(
      this.roles.deployJob,
      [`${this.runSweeper.functionArn}:*`],
      "CDK's grant for the deploy job's on-failure destination covers the sweeper Lambda and its versions (`:*`): one function of the stack, nothing else.",
    );
    // What the sweeper itself cannot handle (the store away for its retries) is dead-lettered.
    this.runSweeper.configureAsyncInvoke({ retryAttempts: 2, onFailure: new SqsDestination(props.pipeline.deadLetterQueue) });
    const workflow = props.pipeline.connect({ recorder: this.runRecorder, sweeper: this.runSweeper, functionArns: props.runtime.functionArns });
    // A stack update changes every Lambda that starts runs before the workflow's definition: the
    // definition reads what the execution input of the current code has (`notify`), never
    // a field the code of an earlier stack did not write (runWorkflow.ts, the Record state).
    const starters = [...this.routes.filter(({ spec }) => spec.auth && routeGroupOf(spec) === "invoke").map(({ handler }) => handler), this.scheduledRun, this.runSweeper];
    for (const starter of starters) workflow.node.addDependency(starter);
    this.webhookDelivery = handler("WebhookDelivery", {
      entry: "webhookDelivery",
      functionName: names.webhookDelivery,
      description: "browserfn webhook delivery: consumes the webhook queue, signs and POSTs each event, records the attempt, retries with backoff",
      role: this.roles.webhookDelivery,
      environment: { ...storeEnv, [AWS_ENV.webhookQueueUrl]: props.webhooks.queue.queueUrl, [AWS_ENV.secretsKeyArn]: props.secretsKey.key.keyArn },
      logRetention,
      timeout: WEBHOOK_DELIVERY_TIMEOUT,
      memorySize: 256,
    });
    props.webhooks.connect(this.webhookDelivery);
    for (const [role, groups] of logGroups) grantLogWrites(role, groups);

    acknowledge(
      this,
      "AwsSolutions-L1",
      `The handlers run on ${HANDLER_RUNTIME.name}, the runtime the code is built and tested for (DESIGN.md: Node 20 locally, nodejs22.x on Lambda); moving to a newer runtime is a deliberate, tested change.`,
    );
  }
}
