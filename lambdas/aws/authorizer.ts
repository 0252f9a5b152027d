import type { APIGatewayRequestAuthorizerEventV2, APIGatewaySimpleAuthorizerWithContextResult } from "aws-lambda";
import { ApiError } from "../http/errors";
import type { Identity } from "../identity/identity";
import { readIdentityEnv } from "./awsConfig";
import { createAwsIdentityDeps } from "./awsIdentityDeps";
import { type AuthorizerContext, errorContext, principalContext } from "./authorizerContext";
import { once } from "./once";

export type AuthorizerResult = APIGatewaySimpleAuthorizerWithContextResult<AuthorizerContext>;

export interface AuthorizerDeps {
  identity: Identity;
  log: (line: string) => void;
}

/**
 * The HTTP API's Lambda authorizer (payload 2.0, simple responses): checks the bearer API key
 * or OAuth access token with the same Identity the local server uses. It reads the
 * `Authorization` header and nothing else, because API Gateway caches its answer keyed by that
 * header alone (lib/httpApi.ts).
 *
 * A verdict on the token is an answer: it allows, passing either the principal or the 401
 * error as context, and the route handler answers the error in the API's JSON shape (see
 * authorizerContext.ts and docs/deploy.md). A failure to reach a verdict (the store or the
 * issuer's keys unreachable, a bug) is thrown instead: API Gateway answers that one request
 * 500 and caches nothing, so a passing fault is not served to the same token for the cache's
 * lifetime.
 */
export function makeAuthorizer(deps: AuthorizerDeps) {
  return async (event: APIGatewayRequestAuthorizerEventV2): Promise<AuthorizerResult> => {
    try {
      const principal = await deps.identity.authenticate(event.headers?.authorization);
      return { isAuthorized: true, context: principalContext(principal) };
    } catch (error) {
      if (isVerdict(error)) return { isAuthorized: true, context: errorContext(error) };
      deps.log(`[${event.requestContext.requestId}] authorizer error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      throw new Error("The token could not be checked; see the log line with this request id");
    }
  };
}

/** A 401 (missing_token, invalid_token) is about the token itself: the same token gets it again. */
function isVerdict(error: unknown): error is ApiError {
  return error instanceof ApiError && error.status === 401;
}

/** The authorizer with its deps built from the environment on the first request. */
export function lazyAuthorizer(build: () => AuthorizerDeps = () => createAwsIdentityDeps(readIdentityEnv(process.env))) {
  const authorizer = once(() => makeAuthorizer(build()));
  return async (event: APIGatewayRequestAuthorizerEventV2): Promise<AuthorizerResult> => {
    let authorize: Awaited<ReturnType<typeof authorizer>>;
    try {
      authorize = await authorizer();
    } catch (error) {
      console.error(`authorizer start failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      throw new Error("The authorizer could not start; see its log");
    }
    return authorize(event);
  };
}
