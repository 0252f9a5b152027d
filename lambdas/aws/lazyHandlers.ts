import type { Context } from "aws-lambda";
import type { Deps } from "../deps";
import type { DeployJobDeps } from "../functions/deployJob";
import { makeDeployJobHandler } from "../runtime/aws/deployJobs";
import { errorResult } from "../http/errorBody";
import { fitLambdaEnvelope } from "./lambdaEnvelope";
import type { LambdaHandler, RouteFactory } from "../http/defineRoute";
import { makeScheduledRunHandler, type ScheduledRunEvent } from "../schedule/scheduledRunHandler";
import { makeRunRecorder, type RecordRunDeps } from "../runtime/aws/recordRun";
import { makeRunSweeper, type SweepDeps, type SweepEvent } from "../runtime/aws/sweepRuns";
import { readDeliveryEnv, readRecorderEnv, readSweeperEnv } from "./awsConfig";
import { createAwsDeliveryDeps, createAwsRecorderDeps, createAwsSweepDeps } from "./awsDeps";
import { type DeliveryConsumerDeps, makeDeliveryConsumer } from "../webhooks/aws/deliveryConsumer";
import type { SQSEvent } from "aws-lambda";
import { once } from "./once";

export { once };

/**
 * A route's Lambda handler whose deps are built on the first request, not at import: an
 * entry module has no side effects, and a bad environment answers the API's JSON
 * `internal_error` (with the reason in the log) instead of a crashed init. `buildDeps` is its
 * route group's factory (lambdas/aws/routeDeps/): the bundle holds only the clients it builds.
 */
export function lazyRoute(factory: RouteFactory, buildDeps: () => Deps): LambdaHandler {
  const handler = once(() => {
    const deps = buildDeps();
    return { route: factory(deps), deps };
  });
  return async (event, context) => {
    let built: { route: LambdaHandler; deps: Deps };
    try {
      built = await handler();
    } catch (error) {
      return errorResult(error, event.requestContext.requestId);
    }
    const result = await built.route(event, context);
    // Lambda freezes the container once the handler returns: the run queue's work this request
    // set off (the dispatch an enqueue wakes) is done first. It never polls for a queued run.
    await built.deps.queue.idle();
    // Lambda's answer is JSON with the body escaped in it: it must fit Lambda's 6 MB (#23.2).
    return fitLambdaEnvelope(result, event.requestContext.requestId);
  };
}

/** The deploy-job Lambda's handler (jobs queued by create and update), with its deps built on the first job. */
export function lazyDeployJob(buildDeps: () => DeployJobDeps) {
  const handler = once(() => makeDeployJobHandler(buildDeps()));
  return async (event: unknown, _context?: Context) => (await handler())(event);
}

/** The scheduled-run Lambda's handler, with its deps built on the first firing. */
export function lazyScheduledRun(buildDeps: () => Deps) {
  const handler = once(() => {
    const deps = buildDeps();
    return { run: makeScheduledRunHandler(deps), deps };
  });
  return async (event: ScheduledRunEvent, _context?: Context) => {
    const built = await handler();
    try {
      return await built.run(event);
    } finally {
      // A firing queued behind a full plan: its dispatch is done before the container is frozen.
      await built.deps.queue.idle();
    }
  };
}

/** The run recorder's handler (invoked by the run workflow), with its deps built on the first event. */
export function lazyRunRecorder(buildDeps: () => RecordRunDeps = () => createAwsRecorderDeps(readRecorderEnv(process.env))) {
  const handler = once(() => makeRunRecorder(buildDeps()));
  return async (event: unknown, _context?: Context) => (await handler())(event);
}

/** The run sweeper's handler (its schedule, and workflow executions that ended unrecorded). */
export function lazyRunSweeper(buildDeps: () => SweepDeps = () => createAwsSweepDeps(readSweeperEnv(process.env))) {
  const handler = once(() => makeRunSweeper(buildDeps()));
  return async (event: SweepEvent, _context?: Context) => (await handler())(event);
}

/** The webhook delivery Lambda's handler (the webhook queue's consumer), with its deps built on the first batch. */
export function lazyWebhookDelivery(buildDeps: () => DeliveryConsumerDeps = () => createAwsDeliveryDeps(readDeliveryEnv(process.env))) {
  const handler = once(() => makeDeliveryConsumer(buildDeps()));
  return async (event: SQSEvent, _context?: Context) => (await handler())(event);
}
