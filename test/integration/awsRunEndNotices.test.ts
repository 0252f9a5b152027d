import { principalContext } from "../../lambdas/aws/authorizerContext";
import { lazyRoute } from "../../lambdas/aws/lazyHandlers";
import { createFunction } from "../../lambdas/handlers/createFunction";
import { invokePost } from "../../lambdas/handlers/invokePost";
import type { HttpResult } from "../../lambdas/http/response";
import { lambdaContext } from "../../lambdas/local/lambdaContext";
import { RunQueueState } from "../../lambdas/queue/queueState";
import type { RunItem } from "../../lambdas/runs/types";
import { apiGatewayEvent } from "../helpers/apiGatewayEvent";
import { type AwsPipeline, pipelineRouteDeps, startAwsPipeline, WAIT_QUEUE_TAGS, WAIT_QUEUE_URL_PREFIX } from "../helpers/awsPipeline";

// #23 item 1: a sync call waits for the recorder's notice on its route container's wait queue
// (SQS), not by reading the run's record over and over. The real route handler, runtime adapter,
// run workflow, runner and recorder; SQS, Lambda and Step Functions stood in for in process.

const SLEEPER = "export default async (ms: number) => { await new Promise((resolve) => setTimeout(resolve, ms)); return { slept: ms }; };";
const principal = principalContext({ account_id: "acme", plan: "pro", admin: false, key_id: "key_1" });
const WINDOW_SECONDS = 8;
const QUEUE_NAME = /^bfn-wait-[0-9a-z]{1,10}-[0-9a-f]{8}$/;

describe("waiting for a run's end on AWS: the recorder's notice", () => {
  let pipeline: AwsPipeline;
  /** The run ids the runtime (the waiting route) read the record of, one entry per read. */
  const reads: string[] = [];
  let invoke: (ms: number, headers?: Record<string, string>) => Promise<HttpResult>;
  const runIdOf = (answer: HttpResult) => String(answer.headers?.["x-run-id"] ?? JSON.parse(answer.body ?? "{}").run_id);

  beforeAll(async () => {
    let runs: AwsPipeline["memory"]["store"]["runs"] | undefined = undefined;
    pipeline = await startAwsPipeline({
      // No fixed poll interval: without the notice the route would read with RUN_READS' backoff.
      runtime: {
        runPollIntervalMs: undefined,
        runs: {
          get: (runId: string): Promise<RunItem | undefined> => {
            reads.push(runId);
            return (runs as NonNullable<typeof runs>).get(runId);
          },
        },
      },
    });
    runs = pipeline.memory.store.runs;
    const deps = pipelineRouteDeps(pipeline, { syncWaitSeconds: WINDOW_SECONDS, queue: new RunQueueState() });
    const created = await createFunction(deps)(apiGatewayEvent(principal, "POST", "/functions", { name: "sleeper", code: SLEEPER }), lambdaContext("createFunction", "req"));
    expect(created.statusCode).toBe(201);
    const route = lazyRoute(invokePost, () => deps);
    invoke = (ms, headers = {}) => {
      const event = apiGatewayEvent(principal, "POST", "/functions/sleeper", { ms }, { ref: "sleeper" }, headers);
      event.requestContext.timeEpoch = Date.now();
      return route(event, lambdaContext("invokePost", "req"));
    };
  }, 120_000);
  afterAll(async () => {
    await pipeline?.settled();
    await pipeline?.close();
  });

  it("answers a run of several seconds after one read of its record, woken by one long poll", async () => {
    const answer = await invoke(4000);
    expect([answer.statusCode, JSON.parse(answer.body ?? "{}")]).toEqual([200, { slept: 4000 }]);
    const runId = runIdOf(answer);
    // Polled with RUN_READS' backoff this was 7-8 reads (this failed before the notice).
    expect(reads.filter((id) => id === runId).length).toBeLessThanOrEqual(2);
    expect(reads.filter((id) => id === runId)).toEqual([runId]);

    // The container's queue: made once, short retention, encrypted, tagged.
    const creates = pipeline.sqs.callsOf("CreateQueueCommand");
    expect(creates).toHaveLength(1);
    const queueName = String(creates[0]?.input.QueueName);
    expect(queueName).toMatch(QUEUE_NAME);
    expect(creates[0]).toEqual({
      by: "route",
      command: "CreateQueueCommand",
      input: { QueueName: queueName, Attributes: { MessageRetentionPeriod: "60", SqsManagedSseEnabled: "true" }, tags: WAIT_QUEUE_TAGS },
    });
    const queueUrl = `https://sqs.eu-west-1.amazonaws.com/123456789012/${queueName}`;
    expect(queueUrl.startsWith(WAIT_QUEUE_URL_PREFIX)).toBe(true);
    // The execution names the queue; the recorder sent the run's id there once, and nothing else.
    expect((pipeline.stepFunctions.executions.get(runId)?.input as { notify?: unknown }).notify).toBe(queueUrl);
    expect(pipeline.sqs.callsOf("SendMessageCommand")).toEqual([{ by: "recorder", command: "SendMessageCommand", input: { QueueUrl: queueUrl, MessageBody: JSON.stringify({ run_id: runId }) } }]);
    // One long poll (at most 20 s, as long as the window), ended by the notice, which was deleted.
    const receives = pipeline.sqs.callsOf("ReceiveMessageCommand");
    expect(receives).toHaveLength(1);
    expect(receives[0]).toEqual({
      by: "route",
      command: "ReceiveMessageCommand",
      input: { QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: expect.any(Number), VisibilityTimeout: 0 },
    });
    expect(receives[0]?.input.WaitTimeSeconds).toBeGreaterThanOrEqual(WINDOW_SECONDS - 2);
    expect(receives[0]?.input.WaitTimeSeconds).toBeLessThanOrEqual(WINDOW_SECONDS);
    expect(pipeline.sqs.callsOf("DeleteMessageCommand")).toEqual([{ by: "route", command: "DeleteMessageCommand", input: { QueueUrl: queueUrl, ReceiptHandle: expect.any(String) } }]);
    expect(pipeline.sqs.queues.get(queueUrl)?.messages).toEqual([]);
  }, 60_000);

  it("reads a run still going at the window's end once, answers 202, and drops its late notice at the next wait", async () => {
    const before = pipeline.sqs.calls.length;
    const late = await invoke((WINDOW_SECONDS + 2) * 1000);
    expect(late.statusCode).toBe(202);
    const lateId = runIdOf(late);
    // One read at the window's end (a lost notice would be found there), none after.
    expect(reads.filter((id) => id === lateId)).toEqual([lateId]);
    await pipeline.settled();
    // The recorder's notice came after the answer: it waits in the queue, nobody reads the record.
    expect(reads.filter((id) => id === lateId)).toEqual([lateId]);
    const queueUrl = String(pipeline.sqs.callsOf("CreateQueueCommand")[0]?.input.QueueName);
    const lateNotice = pipeline.sqs.callsOf("SendMessageCommand").at(-1);
    expect(lateNotice?.input.MessageBody).toBe(JSON.stringify({ run_id: lateId }));

    // The next call on this container: the same queue, the stale notice deleted, its own end heard.
    const next = await invoke(300);
    expect([next.statusCode, JSON.parse(next.body ?? "{}")]).toEqual([200, { slept: 300 }]);
    expect(reads.filter((id) => id === runIdOf(next))).toEqual([runIdOf(next)]);
    const since = pipeline.sqs.calls.slice(before);
    expect(since.filter((call) => call.command === "CreateQueueCommand")).toEqual([]);
    expect(since.filter((call) => call.command === "DeleteMessageCommand")).toHaveLength(2);
    expect(queueUrl).toMatch(QUEUE_NAME);
  }, 60_000);

  it("asks for no notice for a call answered at once (Prefer: respond-async)", async () => {
    const before = pipeline.sqs.calls.length;
    const accepted = await invoke(10, { prefer: "respond-async" });
    expect(accepted.statusCode).toBe(202);
    await pipeline.settled();
    const runId = runIdOf(accepted);
    expect((pipeline.stepFunctions.executions.get(runId)?.input as { notify?: unknown }).notify).toBeNull();
    expect(pipeline.sqs.calls.slice(before)).toEqual([]);
    expect(reads.filter((id) => id === runId)).toEqual([]);
  }, 60_000);

  it("falls back to reading the record when its queue goes away mid-wait", async () => {
    const [url] = [...pipeline.sqs.queues.keys()];
    const answer = invoke(1500);
    await new Promise((resolve) => setTimeout(resolve, 400));
    // Deleted under the waiting route (as the sweeper would, wrongly): the long poll fails.
    await pipeline.sqs.client("test").send({ constructor: { name: "DeleteQueueCommand" }, input: { QueueUrl: url } });
    const done = await answer;
    expect([done.statusCode, JSON.parse(done.body ?? "{}")]).toEqual([200, { slept: 1500 }]);
    expect(reads.filter((id) => id === runIdOf(done)).length).toBeGreaterThan(1);
    expect(pipeline.logs.some((line) => line.includes("receiving failed"))).toBe(true);
    // The next wait makes a new queue.
    const again = await invoke(10);
    expect(again.statusCode).toBe(200);
    expect(pipeline.sqs.callsOf("CreateQueueCommand")).toHaveLength(2);
  }, 60_000);
});
