import { principalContext } from "../../lambdas/aws/authorizerContext";
import { LambdaQueueState } from "../../lambdas/aws/awsDispatch";
import { lazyRoute } from "../../lambdas/aws/lazyHandlers";
import { DEFAULT_PLANS } from "../../lambdas/config/plans";
import type { Deps } from "../../lambdas/deps";
import { createBatch } from "../../lambdas/handlers/createBatch";
import { createFunction } from "../../lambdas/handlers/createFunction";
import type { HttpResult } from "../../lambdas/http/response";
import { lambdaContext } from "../../lambdas/local/lambdaContext";
import type { Store } from "../../lambdas/store/store";
import { apiGatewayEvent } from "../helpers/apiGatewayEvent";
import { type AwsPipeline, pipelineRouteDeps, startAwsPipeline } from "../helpers/awsPipeline";

// Batches on AWS (issue #22, item 5): the route Lambda is frozen once it answers, so a batch's
// items must all be in the run queue (or started) by then. The route's store stops answering
// the moment its 202 is out, as Lambda's freeze does; the recorder's dispatcher starts the rest.

const ACCOUNT = "acme";
/** One run at a time. */
const PLANS = { ...DEFAULT_PLANS, solo: { ...(DEFAULT_PLANS.free as NonNullable<typeof DEFAULT_PLANS.free>), concurrency: 1 } };
const principal = principalContext({ account_id: ACCOUNT, plan: "solo", admin: false, key_id: "key_1" });
const json = (result: HttpResult) => JSON.parse(result.body ?? "null") as Record<string, unknown>;
const SLEEPER = "export default async (ms: number) => { await new Promise((resolve) => setTimeout(resolve, ms)); return { slept: ms }; };";

/** The store as a frozen Lambda has it: every call made once `frozen()` holds never settles. */
function freezable(store: Store, frozen: () => boolean): Store {
  return new Proxy(store, {
    get(target, section: keyof Store) {
      const part = target[section] as object;
      return new Proxy(part, {
        get(inner, name) {
          const value = Reflect.get(inner, name) as unknown;
          if (typeof value !== "function") return value;
          return (...args: unknown[]) => (frozen() ? new Promise<never>(() => undefined) : (value as (...a: unknown[]) => unknown).apply(inner, args));
        },
      });
    },
  });
}

describe("batches on AWS", () => {
  let pipeline: AwsPipeline;

  afterEach(async () => {
    await pipeline?.close();
  });

  it("has every item of a batch in the queue before the route answers: all end succeeded on a one-run plan, one at a time", async () => {
    pipeline = await startAwsPipeline({ queue: true, plans: PLANS });
    // The account is on the one-run plan, as the authorizer said (the dispatchers read it from its record).
    await pipeline.memory.store.accounts.ensureAccount({ account_id: ACCOUNT, plan: "solo", created_at: new Date().toISOString() });
    let answered = false;
    const deps: Deps = { ...pipelineRouteDeps(pipeline, { syncWaitSeconds: 1, queue: new LambdaQueueState() }) };
    deps.store = freezable(pipeline.memory.store, () => answered);
    const created = await createFunction(deps)(apiGatewayEvent(principal, "POST", "/functions", { name: "sleeper", code: SLEEPER }), lambdaContext("createFunction", "req"));
    const functionId = String(json(created).function_id);
    const route = lazyRoute(createBatch, () => deps);
    const items = [{ ms: 300 }, { ms: 200 }, { ms: 100 }, { ms: 50 }];
    const answer = (await route(apiGatewayEvent(principal, "POST", "/functions/sleeper/batch", { items }, { ref: "sleeper" }), lambdaContext("createBatch", "req"))) as HttpResult;
    answered = true;
    expect(answer.statusCode).toBe(202);
    const runIds = json(answer).run_ids as string[];
    expect(runIds).toHaveLength(4);

    await pipeline.settled();
    const runs = await Promise.all(runIds.map((runId) => pipeline.memory.store.runs.get(runId)));
    expect(runs.map((run) => [run?.status, run?.result_json, run?.batch_id])).toEqual(
      items.map((item) => ["succeeded", JSON.stringify({ slept: item.ms }), json(answer).batch_id]),
    );
    // One at a time: no run started before the one before it had ended.
    const spans = runs.map((run) => [Date.parse(String(run?.started_at)), Date.parse(String(run?.finished_at))] as const).sort((a, b) => a[0] - b[0]);
    for (let n = 1; n < spans.length; n++) expect(spans[n]?.[0]).toBeGreaterThanOrEqual(spans[n - 1]?.[1] ?? Infinity);

    // The route started the first item before it answered; each release's recorder started the next one; each run once.
    const starts = pipeline.starts.map((call) => [call.by, call.command, String(call.input.name)]);
    expect(starts[0]).toEqual(["route", "StartExecutionCommand", runIds[0]]);
    expect(starts.slice(1).every(([by, command]) => by === "recorder" && command === "StartExecutionCommand")).toBe(true);
    expect(starts.map(([, , name]) => name).sort()).toEqual([...runIds].sort());
    expect((await pipeline.memory.store.meters.functionCounters(functionId)).invocations).toBe(4);
    const limits = await pipeline.memory.store.limits.read(ACCOUNT);
    expect([Object.keys(limits?.leases ?? {}), limits?.queued ?? 0]).toEqual([[], 0]);
  }, 90_000);
});
