import type { Context } from "aws-lambda";
import type { Deps } from "../deps";
import { errorResult } from "../http/errorBody";
import type { LambdaHandler, RouteFactory } from "../http/defineRoute";
import { makeScheduledRunHandler, type ScheduledRunEvent } from "../schedule/scheduledRunHandler";
import type { DestinationEvent } from "../runtime/aws/completionEvent";
import { makeRunCompletionHandler, type RunCompletionDeps } from "../runtime/aws/recordCompletion";
import { readAwsEnv, readStoreEnv } from "./awsConfig";
import { createAwsCompletionDeps, createAwsDeps } from "./awsDeps";

/** Deps from this Lambda's environment (set by the CDK stack). */
export const depsFromEnv = (): Deps => createAwsDeps(readAwsEnv(process.env));

/**
 * Builds a value on first use and keeps it for the life of the container. A failed build is
 * not kept: the next call tries again (a throttled or misconfigured start is not permanent).
 */
export function once<T>(build: () => T | Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => {
    value ??= Promise.resolve()
      .then(build)
      .catch((error: unknown) => {
        value = undefined;
        throw error;
      });
    return value;
  };
}

/**
 * A route's Lambda handler whose deps are built on the first request, not at import: an
 * entry module has no side effects, and a bad environment answers the API's JSON
 * `internal_error` (with the reason in the log) instead of a crashed init.
 */
export function lazyRoute(factory: RouteFactory, buildDeps: () => Deps = depsFromEnv): LambdaHandler {
  const handler = once(() => factory(buildDeps()));
  return async (event, context) => {
    let route: LambdaHandler;
    try {
      route = await handler();
    } catch (error) {
      return errorResult(error, event.requestContext.requestId);
    }
    return route(event, context);
  };
}

/** The scheduled-run Lambda's handler, with its deps built on the first firing. */
export function lazyScheduledRun(buildDeps: () => Deps = depsFromEnv) {
  const handler = once(() => makeScheduledRunHandler(buildDeps()));
  return async (event: ScheduledRunEvent, _context?: Context) => (await handler())(event);
}

/** The run-completion Lambda's handler, with its store built on the first event. */
export function lazyRunCompletion(buildDeps: () => RunCompletionDeps = () => createAwsCompletionDeps(readStoreEnv(process.env))) {
  const handler = once(() => makeRunCompletionHandler(buildDeps()));
  return async (event: DestinationEvent, _context?: Context) => (await handler())(event);
}
