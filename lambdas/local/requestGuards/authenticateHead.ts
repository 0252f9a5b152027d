import type { IncomingMessage } from "node:http";
import { type AuthorizerContext, errorContext, principalContext } from "../../aws/authorizerContext";
import { ApiError } from "../../http/errors";
import type { Identity } from "../../identity/identity";

/**
 * What the local server learns from a request's head before it reads the body, as API Gateway's
 * Lambda authorizer does on AWS: the caller's principal, or the 401 to answer with (then the
 * body is never read). `context` undefined: no verdict (an open route, or the token could not
 * be checked: the store unreachable), so the handler checks the token itself, as before.
 */
export interface HeadVerdict {
  context: AuthorizerContext | undefined;
  /** False for a refused token: its body is not read, and its connection is closed after the answer. */
  readBody: boolean;
}

export async function authenticateHead(request: IncomingMessage, routeNeedsToken: boolean, identity: Identity): Promise<HeadVerdict> {
  if (!routeNeedsToken) return { context: undefined, readBody: true };
  try {
    const principal = await identity.authenticate(request.headers.authorization);
    return { context: principalContext(principal), readBody: true };
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return { context: errorContext(error), readBody: false };
    return { context: undefined, readBody: true };
  }
}
