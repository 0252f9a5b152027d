import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from "aws-cdk-lib";
import type { RetentionDays } from "aws-cdk-lib/aws-logs";
import type { Construct } from "constructs";
import { MAIN_TABLE } from "../lambdas/store/tables";
import { applyConcurrencyPlan } from "./concurrencyPlan";
import { DataTables } from "./dataTables";
import { FunctionRuntime } from "./functionRuntime";
import { handlerFunctionNames } from "./handlerGrants";
import { Handlers } from "./handlers";
import { BrowserfnApi } from "./httpApi";
import type { LayerAssetDirs } from "./layerAssets";
import { OAuthServer } from "./oauthServer";
import { RunPipeline } from "./runPipeline";
import { Scheduling } from "./scheduling";
import { SecretsKey } from "./secretsKey";
import { RunnerRollout } from "./runnerRollout";
import { StackCleanup } from "./stackCleanup";
import { WebhookDelivery } from "./webhookDelivery";
import { checkFunctionPrefix, resolveStackSettings, type StackSettings } from "./stackSettings";

export interface BrowserfnStackProps extends StackProps, Partial<StackSettings> {
  /** The two layer directories (bin/app.ts builds them with prepareLayerAssets; tests pass small ones). */
  layerAssets: LayerAssetDirs;
}

/**
 * The AWS deployment of browserfn: the HTTP API with a Lambda per route behind a Lambda
 * authorizer, the DynamoDB table, the per-function Lambda runtime (layers, execution role,
 * scoped control-plane grants), the run pipeline (a Step Functions workflow per run, its
 * recorder, bucket, dead-letter queue, sweeper and alarms), EventBridge Scheduler, and a
 * Cognito OAuth 2.0 server.
 * Settings come from props, else the CDK context, else defaults (stackSettings.ts).
 */
export class BrowserfnStack extends Stack {
  readonly settings: StackSettings;

  constructor(scope: Construct, id: string, props: BrowserfnStackProps) {
    super(scope, id, props);
    const settings = (this.settings = resolveStackSettings(this.node, props));
    checkFunctionPrefix(settings.functionPrefix, handlerFunctionNames(settings.prefix).all());

    const data = new DataTables(this, "Data", {
      prefix: settings.prefix,
      removalPolicy: settings.tableRemovalPolicy === "destroy" ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
    });
    const table = data.tables.get(MAIN_TABLE.id);
    if (!table) throw new Error(`DataTables has no '${MAIN_TABLE.id}' table`);

    const runtime = new FunctionRuntime(this, "FunctionRuntime", {
      prefix: settings.prefix,
      functionPrefix: settings.functionPrefix,
      layerAssets: props.layerAssets,
      logRetention: settings.logRetentionDays as RetentionDays,
    });
    const pipeline = new RunPipeline(this, "RunPipeline", {
      stateMachineName: `${settings.prefix}-runs`,
      prefix: settings.prefix,
      artifactExpiration: Duration.days(settings.artifactRetentionDays),
      logRetention: settings.logRetentionDays as RetentionDays,
      removalPolicy: settings.tableRemovalPolicy === "destroy" ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
    });
    const scheduling = new Scheduling(this, "Scheduling", { groupName: settings.prefix, namePrefix: "" });
    const secretsKey = new SecretsKey(this, "Secrets", {
      prefix: settings.prefix,
      existingKeyArn: settings.secretsKeyArn,
      removalPolicy: settings.tableRemovalPolicy === "destroy" ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
    });
    const webhooks = new WebhookDelivery(this, "Webhooks");
    const oauth = new OAuthServer(this, "OAuth", {
      prefix: settings.prefix,
      domainPrefix: settings.cognitoDomainPrefix,
      callbackUrls: settings.oauthCallbackUrls,
    });
    const handlers = new Handlers(this, "Handlers", {
      settings,
      table,
      indexNames: MAIN_TABLE.globalSecondaryIndexes.map((index) => index.indexName),
      runtime,
      scheduling,
      oauth,
      pipeline,
      secretsKey,
      webhooks,
    });
    applyConcurrencyPlan(handlers, settings.reservedConcurrency);
    new StackCleanup(this, "Cleanup", {
      functionName: handlerFunctionNames(settings.prefix).stackCleanup,
      runtime,
      reserveConcurrency: settings.reservedConcurrency !== "off",
      logRetention: settings.logRetentionDays as RetentionDays,
    });
    // A stack update's runner layers reach every function's live alias (#23.8, docs/deploy.md "Runner rollout").
    new RunnerRollout(this, "RunnerRollout", {
      jobFunctionName: handlerFunctionNames(settings.prefix).runnerRollout,
      triggerFunctionName: handlerFunctionNames(settings.prefix).runnerRolloutTrigger,
      runtime,
      table,
      reserveConcurrency: settings.reservedConcurrency !== "off",
      logRetention: settings.logRetentionDays as RetentionDays,
    });
    const api = new BrowserfnApi(this, "Api", {
      prefix: settings.prefix,
      stageName: settings.stageName,
      throttle: { rateLimit: settings.throttleRatePerSecond, burstLimit: settings.throttleBurst },
      logRetention: settings.logRetentionDays,
      routes: handlers.routes,
      authorizer: handlers.authorizer,
      routeNotFound: handlers.routeNotFound,
    });

    new CfnOutput(this, "ApiUrl", { value: api.url, description: "Base URL of the API" });
    new CfnOutput(this, "UserPoolId", { value: oauth.userPool.userPoolId });
    new CfnOutput(this, "TokenUrl", { value: oauth.tokenUrl, description: "OAuth 2.0 token endpoint (client credentials)" });
    new CfnOutput(this, "ClientCredentialsClientId", { value: oauth.machineClient.userPoolClientId });
    new CfnOutput(this, "WebClientId", { value: oauth.webClient.userPoolClientId });
    new CfnOutput(this, "TableName", { value: table.tableName });
    new CfnOutput(this, "RunStateMachineArn", { value: pipeline.stateMachineArn, description: "The run workflow: one execution per run, named by its run id" });
    new CfnOutput(this, "RunDeadLetterQueueUrl", { value: pipeline.deadLetterQueue.queueUrl, description: "Runs the recorder could not record" });
    new CfnOutput(this, "WebhookDeadLetterQueueUrl", { value: webhooks.deadLetterQueue.queueUrl, description: "Webhook deliveries the delivery Lambda could not handle" });
  }
}
