import { principalContext } from "../../lambdas/aws/authorizerContext";
import { lazyRoute } from "../../lambdas/aws/lazyHandlers";
import { cancelRun } from "../../lambdas/handlers/cancelRun";
import { createFunction } from "../../lambdas/handlers/createFunction";
import { invokePost } from "../../lambdas/handlers/invokePost";
import type { HttpResult } from "../../lambdas/http/response";
import { lambdaContext } from "../../lambdas/local/lambdaContext";
import { RunQueueState } from "../../lambdas/queue/queueState";
import type { RunItem } from "../../lambdas/runs/types";
import { apiGatewayEvent } from "../helpers/apiGatewayEvent";
import { type AwsPipeline, pipelineRouteDeps, startAwsPipeline, WAIT_QUEUE_URL_PREFIX } from "../helpers/awsPipeline";

// #23 item 1, the queued case: a sync call whose run waits in the run queue (its plan's slots
// taken) is started later by another Lambda (the recorder, after a release). The call's wait
// queue travels with the queued run into the execution's input, so the recorder's end notice
// reaches the waiting route. The real route, queue, workflow, runner and recorder; SQS, Lambda
// and Step Functions stood in for in process.

const SLEEPER = "export default async (ms: number) => { await new Promise((resolve) => setTimeout(resolve, ms)); return { slept: ms }; };";
// The free plan: two runs at a time.
const principal = principalContext({ account_id: "acme", plan: "free", admin: false, key_id: "key_1" });
const ASYNC = { prefer: "respond-async" };
const json = (result: HttpResult) => JSON.parse(result.body ?? "null") as Record<string, unknown>;
const runIdOf = (answer: HttpResult) => String(answer.headers?.["x-run-id"] ?? json(answer).run_id);
const inputOf = (pipeline: AwsPipeline, runId: string) => JSON.parse(String(pipeline.starts.find((call) => call.input.name === runId)?.input.input)) as { notify?: unknown };

describe("a sync call whose run waits in the run queue on AWS", () => {
  let pipeline: AwsPipeline;
  /** Reads of each run's record by the route's runtime (its watch of the end), one entry per read. */
  const reads: string[] = [];
  let invoke: (windowSeconds: number, ms: number, headers?: Record<string, string>) => Promise<HttpResult>;

  beforeAll(async () => {
    const late: { runs?: AwsPipeline["memory"]["store"]["runs"] } = {};
    pipeline = await startAwsPipeline({
      queue: true,
      runtime: {
        runPollIntervalMs: undefined,
        runs: {
          get: (runId: string): Promise<RunItem | undefined> => {
            reads.push(runId);
            return (late.runs as NonNullable<typeof late.runs>).get(runId);
          },
        },
      },
    });
    late.runs = pipeline.memory.store.runs;
    const routes = new Map<number, ReturnType<typeof lazyRoute>>();
    const routeOf = (windowSeconds: number) => {
      const known = routes.get(windowSeconds);
      if (known) return known;
      const deps = pipelineRouteDeps(pipeline, { syncWaitSeconds: windowSeconds, queue: new RunQueueState() });
      const route = lazyRoute(invokePost, () => deps);
      routes.set(windowSeconds, route);
      return route;
    };
    const created = await createFunction(pipelineRouteDeps(pipeline, { syncWaitSeconds: 1 }))(
      apiGatewayEvent(principal, "POST", "/functions", { name: "sleeper", code: SLEEPER }),
      lambdaContext("createFunction", "req"),
    );
    expect(created.statusCode).toBe(201);
    invoke = (windowSeconds, ms, headers = {}) => {
      const event = apiGatewayEvent(principal, "POST", "/functions/sleeper", { ms }, { ref: "sleeper" }, headers);
      event.requestContext.timeEpoch = Date.now();
      return routeOf(windowSeconds)(event, lambdaContext("invokePost", "req")) as Promise<HttpResult>;
    };
  }, 120_000);
  afterAll(async () => {
    await pipeline?.close();
  });

  it("answers 200 with the result once the recorder that started the queued run tells its end", async () => {
    const busy = [await invoke(10, 1500, ASYNC), await invoke(10, 1500, ASYNC)];
    expect(busy.map((answer) => answer.statusCode)).toEqual([202, 202]);
    const answer = await invoke(15, 300);
    // Before: the route heard nothing of a run the recorder started, and answered 202 at its window's end.
    expect([answer.statusCode, json(answer)]).toEqual([200, { slept: 300 }]);
    const runId = runIdOf(answer);
    // Started by the recorder (a release), with the waiting route's queue named in its input.
    expect(pipeline.starts.filter((call) => call.input.name === runId).map((call) => call.by)).toEqual(["recorder"]);
    const queueName = String(pipeline.sqs.callsOf("CreateQueueCommand", "route")[0]?.input.QueueName);
    const queueUrl = `https://sqs.eu-west-1.amazonaws.com/123456789012/${queueName}`;
    expect(queueUrl.startsWith(WAIT_QUEUE_URL_PREFIX)).toBe(true);
    expect(inputOf(pipeline, runId).notify).toBe(queueUrl);
    expect(pipeline.sqs.callsOf("SendMessageCommand")).toEqual([{ by: "recorder", command: "SendMessageCommand", input: { QueueUrl: queueUrl, MessageBody: JSON.stringify({ run_id: runId }) } }]);
    // Heard, not polled: one read of the record, after the notice.
    expect(reads.filter((id) => id === runId)).toEqual([runId]);
    // The async runs before it asked for no notice.
    expect(busy.map((call) => inputOf(pipeline, runIdOf(call)).notify)).toEqual([null, null]);
    await pipeline.settled();
  }, 60_000);

  it("answers 202 queued when its window ends before the run starts, and nothing reads the run after", async () => {
    const before = pipeline.sqs.calls.length;
    await invoke(10, 3000, ASYNC);
    await invoke(10, 3000, ASYNC);
    const answer = await invoke(2, 10);
    const runId = runIdOf(answer);
    expect([answer.statusCode, json(answer).status]).toEqual([202, "queued"]);
    await pipeline.settled();
    await expect(pipeline.memory.store.runs.get(runId)).resolves.toMatchObject({ status: "succeeded", result_json: JSON.stringify({ slept: 10 }) });
    // Its notice went to the queue after the answer; it waits there, unread, and nobody read the record.
    const notify = inputOf(pipeline, runId).notify;
    expect(typeof notify).toBe("string");
    expect(pipeline.sqs.calls.slice(before).filter((call) => call.command === "SendMessageCommand")).toEqual([
      { by: "recorder", command: "SendMessageCommand", input: { QueueUrl: notify, MessageBody: JSON.stringify({ run_id: runId }) } },
    ]);
    expect(reads.filter((id) => id === runId)).toEqual([]);
  }, 60_000);

  it("answers a run canceled while it waited in the queue 409 run_canceled at the window's end", async () => {
    await invoke(10, 3000, ASYNC);
    await invoke(10, 3000, ASYNC);
    const answering = invoke(2, 10);
    let queued: RunItem | undefined;
    for (let look = 0; look < 200 && !queued; look++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      queued = (await pipeline.memory.store.runs.listActive()).find((run) => run.account_id === "acme" && run.status === "queued");
    }
    expect(queued).toBeDefined();
    const runId = String(queued?.run_id);
    const deps = pipelineRouteDeps(pipeline, { syncWaitSeconds: 2 });
    const canceled = await cancelRun(deps)(apiGatewayEvent(principal, "POST", `/runs/${runId}/cancel`, undefined, { run_id: runId }), lambdaContext("cancelRun", "req"));
    expect([canceled.statusCode, json(canceled).status]).toEqual([200, "canceled"]);
    // Before: 202 `running` (the record was no longer queued), for a run that never starts.
    const answer = await answering;
    expect([answer.statusCode, (json(answer).error as { code?: string }).code, (json(answer).error as { details?: unknown }).details]).toEqual([
      409,
      "run_canceled",
      { run_id: runId, status: "canceled" },
    ]);
    await pipeline.settled();
    expect(pipeline.starts.filter((call) => call.input.name === runId)).toEqual([]);
  }, 60_000);
});
