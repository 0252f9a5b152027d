import type { APIGatewayProxyEventV2 } from "aws-lambda";
import type { AuthorizerContext } from "../../lambdas/aws/authorizerContext";

/** A route event as API Gateway hands it to a route Lambda, its caller already authorized as `principal`. */
export function apiGatewayEvent(
  principal: AuthorizerContext,
  method: string,
  rawPath: string,
  body: unknown,
  pathParameters?: Record<string, string>,
  headers: Record<string, string> = {},
): APIGatewayProxyEventV2 {
  return {
    version: "2.0", routeKey: "$default", rawPath, rawQueryString: "", isBase64Encoded: false,
    headers: { "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    ...(pathParameters ? { pathParameters } : {}),
    requestContext: {
      accountId: "123456789012", apiId: "api", domainName: "api.example.com", domainPrefix: "api",
      http: { method, path: rawPath, protocol: "HTTP/1.1", sourceIp: "203.0.113.1", userAgent: "test" },
      requestId: `req-${Math.random()}`, routeKey: "$default", stage: "$default", time: "", timeEpoch: 0,
      authorizer: { lambda: principal },
    },
  } as unknown as APIGatewayProxyEventV2;
}
