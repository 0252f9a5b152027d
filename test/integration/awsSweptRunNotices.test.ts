import { principalContext } from "../../lambdas/aws/authorizerContext";
import { lazyRoute } from "../../lambdas/aws/lazyHandlers";
import { cancelRun } from "../../lambdas/handlers/cancelRun";
import { createFunction } from "../../lambdas/handlers/createFunction";
import { invokePost } from "../../lambdas/handlers/invokePost";
import type { HttpResult } from "../../lambdas/http/response";
import { lambdaContext } from "../../lambdas/local/lambdaContext";
import { RunQueueState } from "../../lambdas/queue/queueState";
import { apiGatewayEvent } from "../helpers/apiGatewayEvent";
import { type AwsPipeline, pipelineRouteDeps, startAwsPipeline } from "../helpers/awsPipeline";

// #23 item 1, the ends the recorder does not write: an execution that fails without recording
// (its recorder failing every retry) or is stopped by a cancel is ended by the sweeper (its
// EventBridge status-change event), which tells the waiting route through the wait queue the
// event's input names, as the recorder would. The real route, cancel, workflow, runner, recorder
// and sweeper; SQS, Lambda and Step Functions stood in for in process.

const SLEEPER = "export default async (ms: number) => { await new Promise((resolve) => setTimeout(resolve, ms)); return { slept: ms }; };";
const principal = principalContext({ account_id: "acme", plan: "pro", admin: false, key_id: "key_1" });
const WINDOW_SECONDS = 10;
const json = (result: HttpResult) => JSON.parse(result.body ?? "null") as Record<string, unknown>;

describe("the sweeper tells a waiting route the ends it writes", () => {
  let pipeline: AwsPipeline;
  /** While set, the recorder fails every record request: executions fail unrecorded. */
  let recorderLost = false;
  let deps: ReturnType<typeof pipelineRouteDeps>;
  let invoke: (ms: number) => Promise<HttpResult>;

  beforeAll(async () => {
    pipeline = await startAwsPipeline({
      recorder: (real) => async (payload) => {
        if (recorderLost && (payload as { run_id?: unknown }).run_id) throw Object.assign(new Error("the table is gone"), { name: "ResourceNotFoundException" });
        return real(payload);
      },
    });
    deps = pipelineRouteDeps(pipeline, { syncWaitSeconds: WINDOW_SECONDS, queue: new RunQueueState() });
    const created = await createFunction(deps)(apiGatewayEvent(principal, "POST", "/functions", { name: "sleeper", code: SLEEPER }), lambdaContext("createFunction", "req"));
    expect(created.statusCode).toBe(201);
    const route = lazyRoute(invokePost, () => deps);
    invoke = (ms) => {
      const event = apiGatewayEvent(principal, "POST", "/functions/sleeper", { ms }, { ref: "sleeper" });
      event.requestContext.timeEpoch = Date.now();
      return route(event, lambdaContext("invokePost", "req")) as Promise<HttpResult>;
    };
  }, 120_000);
  afterAll(async () => {
    await pipeline?.close();
  });

  /** The route's wait queue, and the SQS calls since `from`. */
  const queueUrl = () => `https://sqs.eu-west-1.amazonaws.com/123456789012/${String(pipeline.sqs.callsOf("CreateQueueCommand", "route")[0]?.input.QueueName)}`;
  const since = (from: number, command: string) => pipeline.sqs.calls.slice(from).filter((call) => call.command === command);

  it("answers a run whose execution failed unrecorded with its error, woken by the sweeper's notice", async () => {
    recorderLost = true;
    const from = pipeline.sqs.calls.length;
    const answer = await invoke(300);
    const body = json(answer) as { error: { code: string; details: { run_id: string; status: string } } };
    const runId = body.error.details.run_id;
    // The end the sweeper wrote (a recorder that never recorded is the service's failure).
    expect([answer.statusCode, body.error.code, body.error.details.status]).toEqual([500, "internal_error", "failed"]);
    expect(await pipeline.memory.store.runs.get(runId)).toMatchObject({ status: "failed", error: { code: "internal_error" } });
    expect(pipeline.stepFunctions.executions.get(runId)?.status).toBe("FAILED");
    // Before: nobody sent a notice, and the route heard of the end only at its window's final read.
    expect(since(from, "SendMessageCommand")).toEqual([{ by: "sweeper", command: "SendMessageCommand", input: { QueueUrl: queueUrl(), MessageBody: JSON.stringify({ run_id: runId }) } }]);
    expect(since(from, "DeleteMessageCommand")).toEqual([{ by: "route", command: "DeleteMessageCommand", input: { QueueUrl: queueUrl(), ReceiptHandle: expect.any(String) } }]);
    expect(since(from, "ReceiveMessageCommand")).toHaveLength(1);
    await pipeline.settled();
    recorderLost = false;
  }, 60_000);

  it("answers a sync call whose run is canceled 409 run_canceled, and keeps its slot while its Lambda runs on", async () => {
    const from = pipeline.sqs.calls.length;
    const answering = invoke(4000);
    let runId: string | undefined;
    for (let look = 0; look < 400 && !runId; look++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      runId = [...pipeline.stepFunctions.executions.entries()].find(([, execution]) => (execution.input as { event?: { params?: { ms?: unknown } } }).event?.params?.ms === 4000)?.[0];
    }
    expect(runId).toBeDefined();
    for (let look = 0; look < 400 && (await pipeline.memory.store.runs.get(String(runId)))?.status !== "running"; look++) await new Promise((resolve) => setTimeout(resolve, 10));
    const canceled = await cancelRun(deps)(apiGatewayEvent(principal, "POST", `/runs/${runId}/cancel`, undefined, { run_id: String(runId) }), lambdaContext("cancelRun", "req"));
    expect([canceled.statusCode, json(canceled).status]).toEqual([200, "canceled"]);
    // Before: the route kept waiting to its window's end and answered 202 `running`.
    const answer = await answering;
    const body = json(answer) as { error: { code: string; details: { run_id: string; status: string } } };
    expect([answer.statusCode, body.error.code, body.error.details]).toEqual([409, "run_canceled", { run_id: runId, status: "canceled" }]);
    expect(since(from, "SendMessageCommand")).toEqual([{ by: "sweeper", command: "SendMessageCommand", input: { QueueUrl: queueUrl(), MessageBody: JSON.stringify({ run_id: runId }) } }]);
    // Its Lambda invocation runs on: the slot is not given back by the answer (nor by anyone before the lease ends).
    await pipeline.settled();
    expect((await pipeline.memory.store.limits.current("acme", new Date())).inFlight).toBe(1);
    expect(await pipeline.memory.store.runs.get(String(runId))).toMatchObject({ status: "canceled", result_json: null });
  }, 60_000);
});
