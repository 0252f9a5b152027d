import { Match, Template } from "aws-cdk-lib/assertions";
import { AWS_ENV, readAwsEnv, readDeliveryEnv, readIdentityEnv, readRecorderEnv, readSweeperEnv } from "../../lambdas/aws/awsConfig";
import { LONG_POLL } from "../../lambdas/aws/longPoll";
import { ROUTES } from "../../lambdas/routes/routeTable";
import { MAIN_TABLE, RUN_LIST_ATTRIBUTES } from "../../lambdas/store/tables";
import { synthStack } from "../helpers/testStack";

// The stack as synthesized (test/helpers/testStack.ts keeps it fast: no bundling, no validation).
type Resource = { Type: string; Properties: Record<string, unknown> };
const resources = (template: Template, type: string) => Object.entries(template.findResources(type)) as [string, Resource][];

/** CloudFormation values with plausible stand-ins for references, as Lambda would see them. */
function fakeResolve(value: unknown): string {
  if (typeof value === "string") return value;
  const v = value as Record<string, unknown>;
  const pseudo: Record<string, string> = { "AWS::Partition": "aws", "AWS::Region": "eu-west-1", "AWS::AccountId": "123456789012", "AWS::URLSuffix": "amazonaws.com" };
  if (typeof v.Ref === "string") {
    // A bucket's Ref is its name; any other resource's here is an ARN.
    if (v.Ref.startsWith("RunPipelineRunBucket")) return v.Ref.toLowerCase();
    // A queue's Ref is its URL.
    if (/Queue[0-9A-F]{8}$/.test(v.Ref)) return `https://sqs.eu-west-1.amazonaws.com/123456789012/${v.Ref}`;
    return pseudo[v.Ref] ?? `arn:aws:ref:eu-west-1:123456789012:${v.Ref}`;
  }
  // A role's unique id (AROA…): upper-case letters and digits.
  if (Array.isArray(v["Fn::GetAtt"]) && (v["Fn::GetAtt"] as string[])[1] === "RoleId") return `AROA${(v["Fn::GetAtt"] as string[])[0]?.toUpperCase().replace(/[^A-Z0-9]/g, "")}`;
  if (Array.isArray(v["Fn::GetAtt"])) return `arn:aws:getatt:eu-west-1:123456789012:${(v["Fn::GetAtt"] as string[]).join(".")}`;
  if (Array.isArray(v["Fn::Join"])) {
    const [delimiter, parts] = v["Fn::Join"] as [string, unknown[]];
    return parts.map(fakeResolve).join(delimiter);
  }
  throw new Error(`cannot resolve ${JSON.stringify(value)}`);
}

describe("the CDK stack", () => {
  const template = synthStack();
  const functions = resources(template, "AWS::Lambda::Function");
  const functionNamed = (name: string) => {
    const found = functions.find(([, fn]) => fn.Properties.FunctionName === name);
    if (!found) throw new Error(`no Lambda named ${name}`);
    return found;
  };

  it("provisions the table of the shared definition: on demand, PITR, TTL, the gsi1 index, retained", () => {
    template.resourceCountIs("AWS::DynamoDB::GlobalTable", 1);
    template.hasResourceProperties("AWS::DynamoDB::GlobalTable", {
      TableName: "bfn-test-main",
      BillingMode: "PAY_PER_REQUEST",
      KeySchema: [
        { AttributeName: MAIN_TABLE.partitionKey.name, KeyType: "HASH" },
        { AttributeName: MAIN_TABLE.sortKey.name, KeyType: "RANGE" },
      ],
      TimeToLiveSpecification: { AttributeName: "expires_at", Enabled: true },
      GlobalSecondaryIndexes: [
        {
          IndexName: "gsi1",
          KeySchema: [
            { AttributeName: "gsi1pk", KeyType: "HASH" },
            { AttributeName: "gsi1sk", KeyType: "RANGE" },
          ],
          Projection: { ProjectionType: "ALL" },
        },
        {
          IndexName: "runs",
          KeySchema: [
            { AttributeName: "runs_pk", KeyType: "HASH" },
            { AttributeName: "runs_sk", KeyType: "RANGE" },
          ],
          Projection: { ProjectionType: "INCLUDE", NonKeyAttributes: [...RUN_LIST_ATTRIBUTES] },
        },
        {
          IndexName: "account_runs",
          KeySchema: [
            { AttributeName: "acct_runs_pk", KeyType: "HASH" },
            { AttributeName: "acct_runs_sk", KeyType: "RANGE" },
          ],
          Projection: { ProjectionType: "INCLUDE", NonKeyAttributes: [...RUN_LIST_ATTRIBUTES] },
        },
      ],
      Replicas: [{ PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } }],
    });
    template.hasResource("AWS::DynamoDB::GlobalTable", { DeletionPolicy: "Retain" });
    const destroyed = synthStack({}, { tableRemovalPolicy: "destroy" });
    destroyed.hasResource("AWS::DynamoDB::GlobalTable", { DeletionPolicy: "Delete" });
  });

  it("routes every route of the route table to its own Lambda, behind the authorizer unless open or checking tokens itself", () => {
    const routes = resources(template, "AWS::ApiGatewayV2::Route");
    const integrations = Object.fromEntries(resources(template, "AWS::ApiGatewayV2::Integration"));
    const [authorizerId] = Object.keys(template.findResources("AWS::ApiGatewayV2::Authorizer"));
    expect(routes).toHaveLength(ROUTES.length + 1);
    for (const route of ROUTES) {
      const found = routes.find(([, r]) => r.Properties.RouteKey === `${route.method} ${route.path}`);
      expect(found).toBeDefined();
      const properties = found?.[1].Properties ?? {};
      if (route.auth && route.gatewayAuthorizer !== false) {
        expect(properties).toMatchObject({ AuthorizationType: "CUSTOM", AuthorizerId: { Ref: authorizerId } });
      } else {
        expect(properties.AuthorizationType).toBe("NONE");
        expect(properties.AuthorizerId).toBeUndefined();
      }
      // Route → integration → the Lambda named for the route's operationId.
      const integrationId = ((properties.Target as { "Fn::Join": [string, [string, { Ref: string }]] })["Fn::Join"][1][1]).Ref;
      const uri = integrations[integrationId]?.Properties.IntegrationUri as { "Fn::GetAtt": [string, string] };
      const [functionId] = functionNamed(`bfn-test-api-${route.operationId}`);
      expect(uri["Fn::GetAtt"][0]).toBe(functionId);
      expect(integrations[integrationId]?.Properties.PayloadFormatVersion).toBe("2.0");
    }
    const fallback = routes.find(([, r]) => r.Properties.RouteKey === "$default");
    expect(fallback?.[1].Properties.AuthorizationType).toBe("NONE");
  });

  it("has a Lambda authorizer: payload 2.0, simple responses, the Authorization header as identity source, a 30 s cache", () => {
    const authorizers = resources(template, "AWS::ApiGatewayV2::Authorizer").map(([, r]) => r.Properties);
    expect(authorizers).toHaveLength(1);
    const [authorizer] = authorizers;
    expect(authorizer).toMatchObject({
      AuthorizerType: "REQUEST",
      AuthorizerPayloadFormatVersion: "2.0",
      EnableSimpleResponses: true,
      // API Gateway answers a request without the header 401 itself, and caches verdicts by it.
      IdentitySource: ["$request.header.Authorization"],
      AuthorizerResultTtlInSeconds: 30,
    });
    const [authorizerFn] = functionNamed("bfn-test-authorizer");
    expect(JSON.stringify(authorizer?.AuthorizerUri)).toContain(authorizerFn);
  });

  it("keeps the open routes and $default off the authorizer, so they answer without an Authorization header", () => {
    const open = resources(template, "AWS::ApiGatewayV2::Route")
      .filter(([, r]) => r.Properties.AuthorizationType === "NONE")
      .map(([, r]) => r.Properties.RouteKey)
      .sort();
    // POST /mcp is authenticated, by its handler (the next test).
    expect(open).toEqual(["$default", "GET /", "GET /.well-known/oauth-protected-resource", "GET /dashboard/{file}", "GET /health", "GET /openapi.json", "POST /mcp"].sort());
    for (const [, route] of resources(template, "AWS::ApiGatewayV2::Route")) {
      if (route.Properties.AuthorizationType === "NONE") expect(route.Properties).not.toHaveProperty("AuthorizerId");
      else expect(route.Properties.AuthorizationType).toBe("CUSTOM");
    }
  });

  it("serves POST /mcp without the authorizer (its handler checks tokens, so a 401 carries WWW-Authenticate) with the invocation routes' role (its tools invoke functions) and the identity's settings; the well-known document as an open route", () => {
    const routes = resources(template, "AWS::ApiGatewayV2::Route");
    const mcpRoute = routes.find(([, r]) => r.Properties.RouteKey === "POST /mcp")?.[1];
    expect(mcpRoute?.Properties.AuthorizationType).toBe("NONE");
    const [, mcp] = functionNamed("bfn-test-api-mcp");
    const [, invokePost] = functionNamed("bfn-test-api-invokePost");
    expect(mcp.Properties.Role).toEqual(invokePost.Properties.Role);
    const env = (mcp.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    const config = readAwsEnv({ ...Object.fromEntries(Object.entries(env).map(([k, v]) => [k, fakeResolve(v)])), AWS_REGION: "eu-west-1" });
    // The same issuer and clients as the authorizer: the handler accepts the same tokens, and the well-known document names the issuer.
    expect(config.oauth).toMatchObject({ issuer: expect.stringMatching(/^https:\/\//), clientIds: expect.any(Array) });
    expect(config.oauth?.clientIds).toHaveLength(2);
    const wellKnown = routes.find(([, r]) => r.Properties.RouteKey === "GET /.well-known/oauth-protected-resource")?.[1];
    expect(wellKnown?.Properties.AuthorizationType).toBe("NONE");
    const [, metadata] = functionNamed("bfn-test-api-oauthProtectedResource");
    const [, health] = functionNamed("bfn-test-api-health");
    expect(metadata.Properties.Role).toEqual(health.Properties.Role);
  });

  it("runs the handlers on nodejs22.x arm64 with bounded timeouts, the environment their entries parse, and own log groups", () => {
    // The routes, the authorizer, the $default route, the scheduled-run target, the recorder, the
    // sweeper, the deploy job, the webhook delivery Lambda, the stack cleanup (#23.7), and the
    // runner rollout's trigger and job (#23.8).
    expect(functions).toHaveLength(ROUTES.length + 10);
    for (const [, fn] of functions) {
      expect(fn.Properties).toMatchObject({ Runtime: "nodejs22.x", Architectures: ["arm64"], Handler: "index.handler" });
      expect(fn.Properties.LoggingConfig).toMatchObject({ LogGroup: { Ref: expect.any(String) } });
    }
    expect(ROUTES.filter((route) => route.analyzesCode).map((route) => route.operationId).sort()).toEqual(["createFunction", "forkFunction", "updateFunction"]);
    for (const route of ROUTES) {
      const [, fn] = functionNamed(`bfn-test-api-${route.operationId}`);
      // The routes that read deployed code have room for their analysis worker's 512 MB heap.
      expect(fn.Properties).toMatchObject({ MemorySize: route.analyzesCode ? 1024 : 512, Timeout: 29 });
      const env = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      const resolved = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, fakeResolve(v)]));
      expect(() => readAwsEnv({ ...resolved, AWS_REGION: "eu-west-1" })).not.toThrow();
    }
    const [, scheduledRun] = functionNamed("bfn-test-scheduled-run");
    expect(scheduledRun.Properties.Timeout).toBe(900);
    const [, authorizer] = functionNamed("bfn-test-authorizer");
    expect(authorizer.Properties.Timeout).toBe(10);
    const authorizerEnv = (authorizer.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    const identity = readIdentityEnv({
      ...Object.fromEntries(Object.entries(authorizerEnv).map(([k, v]) => [k, fakeResolve(v)])),
      AWS_REGION: "eu-west-1",
    });
    expect(identity.oauth?.clientIds).toHaveLength(2);
    expect(authorizerEnv).not.toHaveProperty(AWS_ENV.executionRoleArn);
    const [, recorder] = functionNamed("bfn-test-run-recorder");
    expect(recorder.Properties).toMatchObject({ Timeout: 50, MemorySize: 512 });
    const recorderEnv = (recorder.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    // What starting a queued run needs too (the plans, the run workflow): the recorder and the sweeper dispatch the run queue.
    const dispatcherEnv = [
      AWS_ENV.artifactRetentionDays, AWS_ENV.runBucket, AWS_ENV.runRetentionDays, AWS_ENV.tablePrefix, AWS_ENV.secretsKeyArn, AWS_ENV.functionPrefix,
      AWS_ENV.executionRoleId, AWS_ENV.webhookQueueUrl, AWS_ENV.plans, AWS_ENV.stateMachineArn, "NODE_OPTIONS",
      // The waiting routes' wait queues: the recorder notifies them, the sweeper deletes idle ones.
      AWS_ENV.waitQueueUrlPrefix,
    ].sort();
    expect(Object.keys(recorderEnv).sort()).toEqual(dispatcherEnv);
    expect(() => readRecorderEnv({ ...Object.fromEntries(Object.entries(recorderEnv).map(([k, v]) => [k, fakeResolve(v)])), AWS_REGION: "eu-west-1" })).not.toThrow();
    const [, sweeper] = functionNamed("bfn-test-run-sweeper");
    expect(sweeper.Properties).toMatchObject({ Timeout: 300, MemorySize: 256 });
    const sweeperEnv = (sweeper.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(Object.keys(sweeperEnv).sort()).toEqual(dispatcherEnv);
    expect(() => readSweeperEnv({ ...Object.fromEntries(Object.entries(sweeperEnv).map(([k, v]) => [k, fakeResolve(v)])), AWS_REGION: "eu-west-1" })).not.toThrow();
    const [, delivery] = functionNamed("bfn-test-webhook-delivery");
    expect(delivery.Properties).toMatchObject({ Timeout: 60, MemorySize: 256 });
    const deliveryEnv = (delivery.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(Object.keys(deliveryEnv).sort()).toEqual(
      [AWS_ENV.artifactRetentionDays, AWS_ENV.runRetentionDays, AWS_ENV.secretsKeyArn, AWS_ENV.tablePrefix, AWS_ENV.webhookQueueUrl, "NODE_OPTIONS"].sort(),
    );
    expect(() => readDeliveryEnv({ ...Object.fromEntries(Object.entries(deliveryEnv).map(([k, v]) => [k, fakeResolve(v)])), AWS_REGION: "eu-west-1" })).not.toThrow();
    const [, invokeRoute] = functionNamed("bfn-test-api-invokePost");
    expect(JSON.stringify((invokeRoute.Properties.Environment as { Variables: Record<string, unknown> }).Variables[AWS_ENV.stateMachineArn])).toContain(
      ":stateMachine:bfn-test-runs",
    );
    // Only the routes that wait for runs have wait queues.
    expect(JSON.stringify((invokeRoute.Properties.Environment as { Variables: Record<string, unknown> }).Variables[AWS_ENV.waitQueueUrlPrefix])).toContain("/bfn-test-wait-");
    for (const name of ["bfn-test-api-listRuns", "bfn-test-api-createFunction", "bfn-test-scheduled-run", "bfn-test-deploy-job"]) {
      expect([name, (functionNamed(name)[1].Properties.Environment as { Variables: Record<string, unknown> }).Variables[AWS_ENV.waitQueueUrlPrefix]]).toEqual([name, undefined]);
    }
    template.resourceCountIs("AWS::Logs::LogGroup", functions.length + 3); // + API access logs, the function Lambdas' logs, the run workflow's logs
  });

  it("gives every function's Lambda one log group with the stack's retention, named in the deploying handlers' environment, which the functions may not write (#23.4)", () => {
    const [[logGroupId, logGroup]] = resources(template, "AWS::Logs::LogGroup").filter(([, group]) => group.Properties.LogGroupName === "/browserfn/bfn-test/functions") as [[string, Resource]];
    expect(logGroup.Properties.RetentionInDays).toBe(30);
    for (const name of ["bfn-test-api-createFunction", "bfn-test-api-invokePost"]) {
      const env = (functionNamed(name)[1].Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(env[AWS_ENV.functionLogGroup]).toEqual({ Ref: logGroupId });
    }
    const executionPolicy = Object.values(template.findResources("AWS::IAM::Policy")).find((policy) =>
      JSON.stringify(policy).includes("FunctionRuntimeExecutionRole"),
    ) as { Properties: { PolicyDocument: { Statement: { Action: string[]; Resource: unknown }[] } } };
    // No statement on it, nor any logs action: a run could forge another function's streams (docs/deploy.md, "Logs").
    expect(executionPolicy.Properties.PolicyDocument.Statement.filter((statement) => JSON.stringify(statement.Resource).includes(logGroupId))).toEqual([]);
    expect(executionPolicy.Properties.PolicyDocument.Statement.flatMap((statement) => statement.Action).filter((action) => String(action).startsWith("logs:"))).toEqual([]);
  });

  it("ships the two layers for x86_64 function Lambdas", () => {
    template.hasResourceProperties("AWS::Lambda::LayerVersion", { LayerName: "bfn-test-chromium", CompatibleArchitectures: ["x86_64"] });
    template.hasResourceProperties("AWS::Lambda::LayerVersion", { LayerName: "bfn-test-runtime", CompatibleArchitectures: ["x86_64"] });
  });

  it("schedules with EventBridge Scheduler: group, role, encrypted SSL-only DLQ, a scheduled-run Lambda without retries", () => {
    template.hasResourceProperties("AWS::Scheduler::ScheduleGroup", { Name: "bfn-test" });
    template.hasResourceProperties("AWS::SQS::Queue", { SqsManagedSseEnabled: true });
    template.hasResourceProperties("AWS::SQS::QueuePolicy", {
      PolicyDocument: { Statement: [Match.objectLike({ Effect: "Deny", Condition: { Bool: { "aws:SecureTransport": "false" } } })] },
    });
    const [scheduledRunId] = functionNamed("bfn-test-scheduled-run");
    const [queueId] = Object.keys(template.findResources("AWS::SQS::Queue")).filter((id) => id.startsWith("Scheduling"));
    template.hasResourceProperties("AWS::Lambda::EventInvokeConfig", {
      FunctionName: { Ref: scheduledRunId },
      MaximumRetryAttempts: 0,
      DestinationConfig: { OnFailure: { Destination: { "Fn::GetAtt": [queueId, "Arn"] } } },
    });
    template.hasResourceProperties("AWS::IAM::Role", {
      AssumeRolePolicyDocument: {
        Statement: [Match.objectLike({ Principal: { Service: "scheduler.amazonaws.com" }, Condition: { StringEquals: { "aws:SourceAccount": { Ref: "AWS::AccountId" } } } })],
      },
    });
  });

  it("is its own OAuth 2.0 server: user pool, domain, resource server scopes, a machine and a web client", () => {
    template.hasResourceProperties("AWS::Cognito::UserPool", {
      AdminCreateUserConfig: { AllowAdminCreateUserOnly: true },
      MfaConfiguration: "ON",
      Policies: { PasswordPolicy: Match.objectLike({ MinimumLength: 12, RequireSymbols: true }) },
    });
    template.hasResourceProperties("AWS::Cognito::UserPoolDomain", { Domain: { "Fn::Join": ["", ["bfn-test-", { Ref: "AWS::AccountId" }]] } });
    template.hasResourceProperties("AWS::Cognito::UserPoolResourceServer", {
      Identifier: "browserfn",
      Scopes: ["functions.read", "functions.write", "functions.invoke"].map((ScopeName) => Match.objectLike({ ScopeName })),
    });
    template.hasResourceProperties("AWS::Cognito::UserPoolClient", {
      AllowedOAuthFlows: ["client_credentials"],
      GenerateSecret: true,
      AllowedOAuthScopes: Match.arrayWith([{ "Fn::Join": ["", [Match.anyValue(), "/functions.invoke"]] }]),
    });
    template.hasResourceProperties("AWS::Cognito::UserPoolClient", {
      AllowedOAuthFlows: ["code"],
      GenerateSecret: false,
      CallbackURLs: ["http://localhost:8787/callback"],
    });
  });

  it("serves GET /runs/{run_id}/events by long polling, with a Lambda that outlasts the poll and fits API Gateway's 30 s", () => {
    const [functionId, fn] = functionNamed("bfn-test-api-getRunEvents");
    const timeoutMs = Number(fn.Properties.Timeout) * 1000;
    // The poll, what is gathered after its first event, and a margin for the store's reads.
    expect(timeoutMs).toBeGreaterThanOrEqual(LONG_POLL.waitMs + LONG_POLL.lingerMs + 3_000);
    expect(timeoutMs).toBeLessThan(30_000);
    const [, route] = resources(template, "AWS::ApiGatewayV2::Route").find(([, r]) => r.Properties.RouteKey === "GET /runs/{run_id}/events") ?? [];
    expect(route?.Properties.AuthorizationType).toBe("CUSTOM");
    const integrationId = ((route?.Properties.Target as { "Fn::Join": [string, [string, { Ref: string }]] })["Fn::Join"][1][1]).Ref;
    const integration = Object.fromEntries(resources(template, "AWS::ApiGatewayV2::Integration"))[integrationId];
    expect((integration?.Properties.IntegrationUri as { "Fn::GetAtt": [string, string] })["Fn::GetAtt"][0]).toBe(functionId);
    // The integration may take as long as API Gateway allows (its default, 30 s, when unset).
    expect(Number(integration?.Properties.TimeoutInMillis ?? 30_000)).toBeGreaterThanOrEqual(timeoutMs);
  });

  it("outputs what an operator needs", () => {
    for (const name of ["ApiUrl", "UserPoolId", "TokenUrl", "ClientCredentialsClientId", "WebClientId"]) template.hasOutput(name, {});
  });

  it("takes its settings from props, else context, and refuses bad ones", () => {
    const custom = synthStack({ syncWaitSeconds: 20 }, { stageName: "v1", functionPrefix: "udf-", syncWaitSeconds: "10", throttleRatePerSecond: "50" });
    custom.hasResourceProperties("AWS::ApiGatewayV2::Stage", {
      StageName: "v1",
      DefaultRouteSettings: { ThrottlingRateLimit: 50, ThrottlingBurstLimit: 2000 },
    });
    custom.hasResourceProperties("AWS::Lambda::Function", {
      FunctionName: "bfn-test-api-invokePost",
      Environment: { Variables: Match.objectLike({ [AWS_ENV.syncWaitSeconds]: "20", [AWS_ENV.functionPrefix]: "udf-" }) },
    });
    expect(() => synthStack({ syncWaitSeconds: 29 })).toThrow(/syncWaitSeconds/);
    expect(() => synthStack({}, { throttleBurst: "0" })).toThrow(/throttleBurst/);
    expect(() => synthStack({}, { plans: "{not json" })).toThrow(/plans: not valid JSON/);
    // The handlers may delete every Lambda the function prefix covers: never their own.
    expect(() => synthStack({ functionPrefix: "bfn-test-api-" })).toThrow(/covers the stack's own Lambdas/);
  });
});
