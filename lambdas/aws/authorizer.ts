import type { APIGatewayRequestAuthorizerEventV2, APIGatewaySimpleAuthorizerWithContextResult } from "aws-lambda";
import { ApiError } from "../http/errors";
import type { Identity } from "../identity/identity";
import { readIdentityEnv } from "./awsConfig";
import { createAwsIdentityDeps } from "./awsDeps";
import { type AuthorizerContext, errorContext, principalContext } from "./authorizerContext";
import { once } from "./lazyHandlers";

export type AuthorizerResult = APIGatewaySimpleAuthorizerWithContextResult<AuthorizerContext>;

export interface AuthorizerDeps {
  identity: Identity;
  log: (line: string) => void;
}

/**
 * The HTTP API's Lambda authorizer (payload 2.0, simple responses): checks the bearer API key
 * or OAuth access token with the same Identity the local server uses. It always allows and
 * passes either the principal or the error as context; the route handler answers the error in
 * the API's JSON shape (see authorizerContext.ts and docs/deploy.md).
 */
export function makeAuthorizer(deps: AuthorizerDeps) {
  return async (event: APIGatewayRequestAuthorizerEventV2): Promise<AuthorizerResult> => {
    try {
      const principal = await deps.identity.authenticate(event.headers?.authorization);
      return { isAuthorized: true, context: principalContext(principal) };
    } catch (error) {
      if (!(error instanceof ApiError)) {
        deps.log(`[${event.requestContext.requestId}] authorizer error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      }
      return { isAuthorized: true, context: errorContext(error) };
    }
  };
}

/** The authorizer with its deps built from the environment on the first request. */
export function lazyAuthorizer(build: () => AuthorizerDeps = () => createAwsIdentityDeps(readIdentityEnv(process.env))) {
  const authorizer = once(() => makeAuthorizer(build()));
  return async (event: APIGatewayRequestAuthorizerEventV2): Promise<AuthorizerResult> => {
    try {
      return await (await authorizer())(event);
    } catch (error) {
      console.error(`authorizer start failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      return { isAuthorized: true, context: errorContext(error) };
    }
  };
}
