import type { IncomingMessage } from "node:http";
import type { APIGatewayProxyEventV2 } from "aws-lambda";
import type { AuthorizerContext } from "../aws/authorizerContext";
import { setOwn } from "../code/jsonSchema";

export interface EventInput {
  request: IncomingMessage;
  /** The request target, parsed once by the server. */
  url: URL;
  requestId: string;
  routeKey: string;
  params: Record<string, string>;
  body: string;
  now: Date;
  /** The verdict on the request's token reached from its head (as the HTTP API's Lambda authorizer's), if any. */
  authorizer?: AuthorizerContext;
}

/** Turns a local HTTP request into the API Gateway HTTP API (payload 2.0) event a handler gets on AWS. */
export function toApiGatewayEvent({ request, url, requestId, routeKey, params, body, now, authorizer }: EventInput): APIGatewayProxyEventV2 {
  // Own properties only, as API Gateway's parsed JSON has them: a name such as `constructor`,
  // `toString` or `__proto__` is a key like any other, never something of Object.prototype.
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    if (name === "cookie") cookies.push(...String(value).split(/;\s*/));
    else setOwn(headers, name, Array.isArray(value) ? value.join(",") : value);
  }
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) setOwn(query, name, Object.hasOwn(query, name) ? `${query[name]},${value}` : value);
  const host = headers.host ?? "localhost";
  return {
    version: "2.0",
    routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    cookies: cookies.length > 0 ? cookies : undefined,
    headers,
    queryStringParameters: url.search ? query : undefined,
    pathParameters: Object.keys(params).length > 0 ? params : undefined,
    requestContext: {
      accountId: "local",
      apiId: "local",
      domainName: host,
      domainPrefix: host.split(".")[0] ?? host,
      http: {
        method: request.method ?? "GET",
        path: url.pathname,
        protocol: `HTTP/${request.httpVersion}`,
        sourceIp: request.socket.remoteAddress ?? "127.0.0.1",
        userAgent: headers["user-agent"] ?? "",
      },
      requestId,
      routeKey,
      stage: "$default",
      time: now.toISOString(),
      timeEpoch: now.getTime(),
      ...(authorizer ? { authorizer: { lambda: authorizer } } : {}),
    },
    body: body === "" ? undefined : body,
    isBase64Encoded: false,
  };
}
