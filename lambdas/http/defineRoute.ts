import middy from "@middy/core";
import type { APIGatewayProxyEventV2, Context } from "aws-lambda";
import type { z } from "zod";
import { principalFromContext } from "../aws/authorizerContext";
import type { Deps } from "../deps";
import type { Principal } from "../identity/identity";
import { errorResult } from "./errorBody";
import { ApiError } from "./errors";
import { rateLimitKey } from "./rateLimiter";
import { redactSecrets } from "./redactSecrets";
import type { HttpResult } from "./response";
import { type IssueCode, parseWith } from "./validation";

export type LambdaHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<HttpResult>;

export interface RouteRequest<B, Q> {
  event: APIGatewayProxyEventV2;
  requestId: string;
  principal: Principal;
  body: B;
  query: Q;
  params: Record<string, string>;
  headers: Record<string, string>;
  /** The API's base URL, e.g. `http://127.0.0.1:8787`. */
  baseUrl: string;
  /** When the handler's time runs out (epoch ms, from its Lambda context; Infinity without one). */
  deadline: number;
}

export interface RouteOptions<B, Q> {
  /** False for the open routes (health, OpenAPI); every other route needs a token. */
  auth?: boolean;
  body?: z.ZodType<B>;
  query?: z.ZodType<Q>;
  /** Maps a failed body field to a more precise code than `invalid_request`. */
  bodyIssueCode?: IssueCode;
  /** Headers a 401 of this route carries besides the error body (e.g. /mcp's `WWW-Authenticate`), given the API's base URL. */
  unauthorizedHeaders?: (baseUrl: string) => Record<string, string>;
}

export type RouteFactory = (deps: Deps) => LambdaHandler;

/**
 * One route's Lambda handler: middy with the JSON error middleware, body and query
 * parsing against the route's zod schemas, and authentication, around `handle`.
 */
export function defineRoute<B = undefined, Q = undefined>(
  options: RouteOptions<B, Q>,
  handle: (request: RouteRequest<B, Q>, deps: Deps) => Promise<HttpResult>,
): RouteFactory {
  return (deps) =>
    middy<APIGatewayProxyEventV2, HttpResult>({ timeoutEarlyResponse: outOfTime })
      .use(jsonErrors(deps))
      .handler(async (event, context) => {
        const headers = (event.headers ?? {}) as Record<string, string>;
        const principal =
          options.auth === false ? ANONYMOUS : await authenticate(event, headers, deps).catch((error: unknown) => withUnauthorizedHeaders(error, options, event, deps));
        if (options.auth !== false) deps.rateLimiter?.take(rateLimitKey(principal));
        const request: RouteRequest<B, Q> = {
          event,
          requestId: event.requestContext.requestId,
          principal,
          body: options.body ? parseWith(options.body, readJsonBody(event, deps), "body", options.bodyIssueCode) : (undefined as B),
          query: options.query ? parseWith(options.query, event.queryStringParameters ?? {}, "query") : (undefined as Q),
          params: (event.pathParameters ?? {}) as Record<string, string>,
          headers: withRedactedFreeText(headers),
          baseUrl: baseUrl(event, deps),
          deadline: handlerDeadline(context),
        };
        const result = await handle(request, deps);
        return { ...result, headers: { ...result.headers, "x-request-id": request.requestId } };
      }) as unknown as LambdaHandler;
}

/**
 * What middy throws for a handler still busy just before its Lambda's time runs out (AWS: the
 * handler's timeout; locally: lambdaContext's). Its own default is named `TimeoutError`, which
 * reads as a store that timed out (isStoreUnavailable: a 503 blaming the store); this is the
 * service's own failure to answer in time, an internal error with the request id in the log.
 */
function outOfTime(): never {
  throw new Error("The handler did not answer within its Lambda's time (middy answered for it just before the timeout)");
}

function handlerDeadline(context: Context | undefined): number {
  return typeof context?.getRemainingTimeInMillis === "function" ? Date.now() + context.getRemainingTimeInMillis() : Infinity;
}

/** Free-text headers that runs and logs keep; a bearer secret put in one is not kept. */
const FREE_TEXT_HEADERS = ["x-service-request-origin", "x-service-sdk-version"];

function withRedactedFreeText(headers: Record<string, string>): Record<string, string> {
  const copy = { ...headers };
  for (const name of FREE_TEXT_HEADERS) if (typeof copy[name] === "string") copy[name] = redactSecrets(copy[name]);
  return copy;
}

function withUnauthorizedHeaders<B, Q>(error: unknown, options: RouteOptions<B, Q>, event: APIGatewayProxyEventV2, deps: Deps): never {
  if (options.unauthorizedHeaders && error instanceof ApiError && error.status === 401) Object.assign(error.headers, options.unauthorizedHeaders(baseUrl(event, deps)));
  throw error;
}

const ANONYMOUS: Principal = { account_id: "", plan: "", admin: false, key_id: null };

/**
 * The caller. On AWS the HTTP API's Lambda authorizer has checked the token already and left
 * its verdict in `requestContext.authorizer.lambda`: the principal, or the error to answer
 * (it allows a token it refuses, with the error as its verdict, so that the 401 keeps the API's
 * JSON shape; it throws on its own failures, which API Gateway answers with a 500 it does not cache). Locally there is no
 * authorizer and the token is checked here, with the same Identity.
 */
async function authenticate(event: APIGatewayProxyEventV2, headers: Record<string, string>, deps: Deps): Promise<Principal> {
  const authorizer = (event.requestContext as { authorizer?: { lambda?: Record<string, unknown> } }).authorizer?.lambda;
  if (authorizer) return principalFromContext(authorizer);
  return deps.identity.authenticate(headers.authorization);
}

function jsonErrors(deps: Deps): middy.MiddlewareObj<APIGatewayProxyEventV2, HttpResult> {
  return {
    onError: async (request) => {
      request.response = errorResult(request.error, request.event.requestContext.requestId, deps.log);
    },
  };
}

/** The request body as JSON: absent → `{}`; too large → 413; malformed → 400. */
export function readJsonBody(event: APIGatewayProxyEventV2, deps: Deps): unknown {
  if (event.body === undefined || event.body === null || event.body === "") return {};
  const text = event.isBase64Encoded ? Buffer.from(event.body, "base64").toString("utf8") : event.body;
  const size = Buffer.byteLength(text, "utf8");
  if (size > deps.config.maxBodyBytes) {
    throw new ApiError("payload_too_large", `Body is ${size} bytes; the limit is ${deps.config.maxBodyBytes}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ApiError("invalid_request", `Body is not valid JSON: ${(error as Error).message}`);
  }
}

function baseUrl(event: APIGatewayProxyEventV2, deps: Deps): string {
  if (deps.config.publicUrl) return deps.config.publicUrl;
  const stage = event.requestContext.stage;
  return `https://${event.requestContext.domainName}${stage && stage !== "$default" ? `/${stage}` : ""}`;
}
