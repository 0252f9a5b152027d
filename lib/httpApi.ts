import { Duration, RemovalPolicy } from "aws-cdk-lib";
import { AccessLogFormat } from "aws-cdk-lib/aws-apigateway";
import {
  HttpApi,
  HttpMethod,
  HttpRoute,
  HttpRouteKey,
  type HttpStage,
  LogGroupLogDestination,
} from "aws-cdk-lib/aws-apigatewayv2";
import { HttpLambdaAuthorizer, HttpLambdaResponseType } from "aws-cdk-lib/aws-apigatewayv2-authorizers";
import { HttpLambdaIntegration } from "aws-cdk-lib/aws-apigatewayv2-integrations";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import { LogGroup, type RetentionDays } from "aws-cdk-lib/aws-logs";
import { Construct } from "constructs";
import type { RouteSpec } from "../lambdas/routes/routeSpecs";
import { acknowledge } from "./nag";

export interface BrowserfnApiProps {
  prefix: string;
  stageName: string;
  /** Requests per second and burst the stage lets through (all callers together). */
  throttle: { rateLimit: number; burstLimit: number };
  logRetention: RetentionDays;
  routes: { spec: RouteSpec; handler: IFunction }[];
  authorizer: IFunction;
  /** Answers what no route matched (the `$default` route). */
  routeNotFound: IFunction;
}

/** One JSON line per request; never headers (they carry tokens). */
const ACCESS_LOG_FIELDS = {
  request_id: "$context.requestId",
  time: "$context.requestTime",
  ip: "$context.identity.sourceIp",
  method: "$context.httpMethod",
  path: "$context.path",
  route: "$context.routeKey",
  status: "$context.status",
  latency_ms: "$context.responseLatency",
  integration_status: "$context.integrationStatus",
  integration_error: "$context.integrationErrorMessage",
  authorizer_error: "$context.authorizer.error",
  account: "$context.authorizer.account_id",
  key_id: "$context.authorizer.key_id",
};

/**
 * How long API Gateway remembers the authorizer's verdict for one `Authorization` value. On top
 * of the authorizer's own 30 s memory of verified keys (lambdas/aws/awsIdentityDeps.ts), so a key
 * revoked (or a plan changed) through the API keeps its old answer for up to a minute.
 */
export const AUTHORIZER_CACHE_SECONDS = 30;

/**
 * The HTTP API: one route per entry of the route table, each integrated with its own Lambda
 * (payload 2.0); authenticated routes go through the Lambda authorizer, the open ones
 * (`GET /health`, `GET /openapi.json`, `GET /.well-known/oauth-protected-resource`, the
 * dashboard's page and files) do not, nor does `POST /mcp`, whose handler checks the token
 * itself (see RouteSpec.gatewayAuthorizer); `$default` answers unmatched requests.
 *
 * The authorizer's identity source is the `Authorization` header: on an authenticated route
 * API Gateway answers a request without it itself (401 `{"message":"Unauthorized"}`, not the
 * API's `missing_token` shape) and invokes neither the authorizer nor the handler. Its verdict
 * is cached for AUTHORIZER_CACHE_SECONDS keyed by that header, which is all the authorizer
 * reads, so one caller's verdict is never another's (see docs/deploy.md).
 */
export class BrowserfnApi extends Construct {
  readonly api: HttpApi;
  readonly stage: HttpStage;

  constructor(scope: Construct, id: string, props: BrowserfnApiProps) {
    super(scope, id);
    this.api = new HttpApi(this, "HttpApi", {
      apiName: `${props.prefix}-api`,
      description: "browserfn: browser automations as serverless HTTP APIs",
      createDefaultStage: false,
    });
    const accessLogs = new LogGroup(this, "AccessLogs", { retention: props.logRetention, removalPolicy: RemovalPolicy.DESTROY });
    this.stage = this.api.addStage("Stage", {
      stageName: props.stageName,
      autoDeploy: true,
      throttle: props.throttle,
      accessLogSettings: {
        destination: new LogGroupLogDestination(accessLogs),
        format: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
      },
    });

    const authorizer = new HttpLambdaAuthorizer("TokenAuthorizer", props.authorizer, {
      authorizerName: `${props.prefix}-tokens`,
      responseTypes: [HttpLambdaResponseType.SIMPLE],
      identitySource: ["$request.header.Authorization"],
      resultsCacheTtl: Duration.seconds(AUTHORIZER_CACHE_SECONDS),
    });
    for (const { spec, handler } of props.routes) {
      const [route] = this.api.addRoutes({
        path: spec.path,
        methods: [HttpMethod[spec.method]],
        integration: new HttpLambdaIntegration(`${spec.operationId}Integration`, handler),
        ...(spec.auth && spec.gatewayAuthorizer !== false ? { authorizer } : {}),
      });
      if (!spec.auth && route) {
        acknowledge(route, "AwsSolutions-APIG4", `${spec.method} ${spec.path} is open by design (API.md: liveness, the OpenAPI document and the OAuth protected resource metadata need no token; the dashboard's page and files hold no data, the page calls the API with a key).`);
      }
      if (spec.auth && spec.gatewayAuthorizer === false && route) {
        acknowledge(route, "AwsSolutions-APIG4", `${spec.method} ${spec.path} checks the bearer token in its handler, with the authorizer's own Identity (API keys, OAuth access tokens), so that its 401 carries WWW-Authenticate as MCP clients need; API Gateway would answer a request without a token itself, without it.`);
      }
    }
    const fallback = new HttpRoute(this, "DefaultRoute", {
      httpApi: this.api,
      routeKey: HttpRouteKey.DEFAULT,
      integration: new HttpLambdaIntegration("RouteNotFoundIntegration", props.routeNotFound),
    });
    acknowledge(
      fallback,
      "AwsSolutions-APIG4",
      "The $default route only answers 404 route_not_found / 405 method_not_allowed in the API's JSON error shape; it reads no data.",
    );
  }

  /** The API's base URL. */
  get url(): string {
    return this.stage.url;
  }
}
