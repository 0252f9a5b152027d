import type { APIGatewayProxyEventV2 } from "aws-lambda";
import { principalContext } from "../../lambdas/aws/authorizerContext";
import type { Deps } from "../../lambdas/deps";
import { createFunction } from "../../lambdas/handlers/createFunction";
import { invokePost } from "../../lambdas/handlers/invokePost";
import type { HttpResult } from "../../lambdas/http/response";
import { lambdaContext } from "../../lambdas/local/lambdaContext";
import type { FunctionItem } from "../../lambdas/functions/types";
import type { RunItem } from "../../lambdas/runs/types";
import { apiGatewayEvent } from "./apiGatewayEvent";
import { type AwsPipeline, type AwsPipelineOptions, pipelineRouteDeps, startAwsPipeline } from "./awsPipeline";

/** A route event of `account` (pro plan) as API Gateway hands it to a route Lambda. */
export function apiEvent(account: string, method: string, rawPath: string, body: unknown, pathParameters?: Record<string, string>): APIGatewayProxyEventV2 {
  return apiGatewayEvent(principalContext({ account_id: account, plan: "pro", admin: false, key_id: `key_${account}` }), method, rawPath, body, pathParameters);
}

export const answerJson = (result: HttpResult) => JSON.parse(result.body ?? "null") as Record<string, unknown>;

/** The run an invoke answer is about (its `x-run-id`, a 202's `run_id`, or a failure's details). */
export function runIdOf(answer: HttpResult): string {
  const body = answerJson(answer);
  const details = (body.error as { details?: { run_id?: string } } | undefined)?.details;
  return String(answer.headers?.["x-run-id"] ?? body.run_id ?? details?.run_id ?? "");
}

/** The AWS pipeline (startAwsPipeline) with the route handlers that deploy and invoke on it, for any account. */
export interface AwsRunWorld {
  pipeline: AwsPipeline;
  deps: Deps;
  create(account: string, name: string, code: string, settings?: Record<string, unknown>): Promise<FunctionItem>;
  invoke(account: string, name: string, body: unknown): Promise<HttpResult>;
  run(runId: string): Promise<RunItem | undefined>;
  /** Runs of the function metered so far. */
  metered(functionId: string): Promise<number>;
  inFlight(account: string): Promise<number>;
  close(): Promise<void>;
}

export async function startAwsRunWorld(options: AwsPipelineOptions = {}): Promise<AwsRunWorld> {
  const pipeline = await startAwsPipeline(options);
  const deps = pipelineRouteDeps(pipeline, { syncWaitSeconds: 1 });
  const store = pipeline.memory.store;
  return {
    pipeline,
    deps,
    async create(account, name, code, settings = {}) {
      const created = await createFunction(deps)(apiEvent(account, "POST", "/functions", { name, code, ...settings }), lambdaContext("createFunction", "req"));
      expect([created.statusCode, answerJson(created).status]).toEqual([201, "active"]);
      return (await store.functions.getByName(account, name)) as FunctionItem;
    },
    invoke: (account, name, body) => invokePost(deps)(apiEvent(account, "POST", `/functions/${name}`, body, { ref: name }), lambdaContext("invokePost", "req")),
    run: (runId) => store.runs.get(runId),
    metered: async (functionId) => (await store.meters.functionCounters(functionId)).invocations,
    inFlight: async (account) => (await store.limits.current(account, new Date())).inFlight,
    close: () => pipeline.close(),
  };
}
