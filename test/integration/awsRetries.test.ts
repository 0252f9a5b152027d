import { principalContext } from "../../lambdas/aws/authorizerContext";
import { lazyRoute } from "../../lambdas/aws/lazyHandlers";
import type { Deps } from "../../lambdas/deps";
import { createFunction } from "../../lambdas/handlers/createFunction";
import { invokePost } from "../../lambdas/handlers/invokePost";
import { putSecret } from "../../lambdas/handlers/putSecret";
import type { HttpResult } from "../../lambdas/http/response";
import { lambdaContext } from "../../lambdas/local/lambdaContext";
import { RunQueueState } from "../../lambdas/queue/queueState";
import { toRunView } from "../../lambdas/runs/toRunView";
import { apiGatewayEvent } from "../helpers/apiGatewayEvent";
import { type AttemptCounter, startAttemptCounter } from "../helpers/attemptCounter";
import { type AwsPipeline, pipelineRouteDeps, STATE_MACHINE_ARN, startAwsPipeline } from "../helpers/awsPipeline";

// Retries on AWS (issue #22, item 4): the recorder queues a failed attempt's run again, the
// attempt's execution waits until its retry_at and wakes the run queue, and the next attempt
// is an execution of its own. The real runner and workflow behind in-process Lambda, Step
// Functions and S3; dynalite as DynamoDB; every Step Functions call is asserted.

const ACCOUNT = "acme";
const principal = principalContext({ account_id: ACCOUNT, plan: "free", admin: false, key_id: "key_1" });
const json = (result: HttpResult) => JSON.parse(result.body ?? "null") as Record<string, unknown>;
const ASYNC = { prefer: "respond-async" };
const TOKEN = "tok-aws-retry-never-in-a-record";
/** Fails its first attempt; later ones answer which attempt they are and whether they got the real token. */
const FLAKY = `import { artifacts } from "browserfn/runtime";
export default async (counter: string, token: string) => {
  const attempt = Number(await (await fetch(counter)).text());
  console.log("attempt", attempt);
  await artifacts.save("note.txt", "attempt " + attempt + " of this run");
  await artifacts.save("note-" + attempt + ".txt", "only attempt " + attempt);
  if (attempt === 1) throw new Error("the first attempt fails");
  return { attempt, real_token: token === ${JSON.stringify(TOKEN)} };
};`;
const ALWAYS_FAILS = `export default async (counter: string) => { await fetch(counter); throw new Error("fails every time"); };`;

describe("retries on AWS", () => {
  let pipeline: AwsPipeline;
  let deps: Deps;
  let counter: AttemptCounter;
  let invoke: (name: string, body: unknown) => Promise<HttpResult>;

  beforeAll(async () => {
    counter = await startAttemptCounter();
    pipeline = await startAwsPipeline({ queue: true });
    deps = pipelineRouteDeps(pipeline, { syncWaitSeconds: 1, queue: new RunQueueState() });
    const route = lazyRoute(invokePost, () => deps);
    invoke = (name, body) => route(apiGatewayEvent(principal, "POST", `/functions/${name}`, body, { ref: name }, ASYNC), lambdaContext("invokePost", "req")) as Promise<HttpResult>;
  });
  afterAll(async () => {
    await pipeline?.close();
    await counter?.close();
  });

  async function create(name: string, code: string, retries: { max_attempts: number; backoff_seconds: number }): Promise<string> {
    const created = await createFunction(deps)(apiGatewayEvent(principal, "POST", "/functions", { name, code, retries }), lambdaContext("createFunction", "req"));
    expect([created.statusCode, json(created).status]).toEqual([201, "active"]);
    return String(json(created).function_id);
  }

  /** Step Functions calls since `from`, as [who, command, execution name]. */
  const callsSince = (from: number) =>
    pipeline.starts.slice(from).map((call) => {
      const input = call.input as { name?: string; executionArn?: string };
      return [call.by, call.command, input.name ?? String(input.executionArn).split(":").at(-1)];
    });

  it("runs a failed attempt again after its backoff: the next attempt is an execution of its own, with the real parameters, and the run ends succeeded", async () => {
    const functionId = await create("flaky", FLAKY, { max_attempts: 3, backoff_seconds: 1 });
    const secret = await putSecret(deps)(
      apiGatewayEvent(principal, "PUT", "/functions/flaky/secrets/TOKEN", { value: TOKEN }, { ref: "flaky", name: "TOKEN" }),
      lambdaContext("putSecret", "req"),
    );
    expect(secret.statusCode).toBe(204);
    const from = pipeline.starts.length;
    const accepted = await invoke("flaky", { counter: `${counter.url}flaky`, token: TOKEN });
    expect(accepted.statusCode).toBe(202);
    const runId = String(json(accepted).run_id);
    await pipeline.settled();

    const run = await pipeline.memory.store.runs.get(runId);
    expect(run).toMatchObject({ status: "succeeded", attempt: 2, max_attempts: 3, result_json: JSON.stringify({ attempt: 2, real_token: true }), error: null });
    const view = toRunView(run as NonNullable<typeof run>);
    expect(view.attempts.map((attempt) => [attempt.attempt, attempt.status, attempt.error?.code ?? null])).toEqual([
      [1, "failed", "function_error"],
      [2, "succeeded", null],
    ]);
    // The second attempt started once its backoff (1 s) had passed, woken by the first attempt's execution.
    expect(Date.parse(String(run?.started_at)) - Date.parse(String(view.attempts[0]?.finished_at))).toBeGreaterThanOrEqual(1000);
    expect(counter.count("flaky")).toBe(2);

    // Exactly these Step Functions calls: the route starts attempt 1; its recorder reads the
    // parameters back from that execution's input and, woken at retry_at, starts attempt 2.
    expect(callsSince(from)).toEqual([
      ["route", "StartExecutionCommand", runId],
      ["recorder", "DescribeExecutionCommand", runId],
      ["recorder", "StartExecutionCommand", `${runId}-attempt-2`],
    ]);
    const [first, describe, second] = pipeline.starts.slice(from);
    expect(describe?.input).toEqual({ executionArn: `${STATE_MACHINE_ARN.replace(":stateMachine:", ":execution:")}:${runId}` });
    const firstInput = JSON.parse(String(first?.input.input)) as Record<string, unknown> & { event: Record<string, unknown> };
    const secondInput = JSON.parse(String(second?.input.input)) as Record<string, unknown> & { event: Record<string, unknown> };
    expect(firstInput).toMatchObject({ run_id: runId, attempt: 1, function: `bfn-${functionId}:v1` });
    expect(secondInput).toMatchObject({ run_id: runId, attempt: 2, function: `bfn-${functionId}:v1`, throttles: 0 });
    // The real parameters (the run's own), and the same artifacts URL; fresh upload URLs.
    expect(secondInput.event.params).toEqual({ counter: `${counter.url}flaky`, token: TOKEN });
    expect(secondInput.event.artifacts_url).toBe(firstInput.event.artifacts_url);
    const first1 = pipeline.stepFunctions.executions.get(runId);
    const second2 = pipeline.stepFunctions.executions.get(`${runId}-attempt-2`);
    expect([first1?.status, second2?.status]).toEqual(["SUCCEEDED", "SUCCEEDED"]);
    expect(first1?.trail).toEqual(["Invoke", "Record", "Retrying", "WaitRetry", "WakeQueue", "Recorded"]);
    expect(second2?.trail).toEqual(["Invoke", "Record", "Retrying", "Recorded"]);

    // The record keeps no secret value: its parameters are redacted, and the logs say each attempt.
    expect(JSON.stringify(run)).not.toContain(TOKEN);
    expect(run?.params).toEqual({ counter: `${counter.url}flaky`, token: "[secret]" });
    expect(run?.logs).toBe("--- attempt 1 of 3 ---\nLOG attempt 1\n--- attempt 2 of 3 ---\nLOG attempt 2\n");
    // Artifacts say the attempt that saved them; a name saved again is the later attempt's file.
    const files = await pipeline.memory.store.artifacts.list(runId);
    expect(files.map((file) => [file.name, file.attempt ?? 1, file.bytes])).toEqual([
      ["note-1.txt", 1, 14],
      ["note-2.txt", 2, 14],
      ["note.txt", 2, 21],
    ]);
    expect(pipeline.s3.objects.get(`bfn-run-bucket/artifacts/${runId}/note.txt`)?.toString("utf8")).toBe("attempt 2 of this run");
    // One invocation; both attempts' execution time; the lease given back, nothing queued.
    const usage = await pipeline.memory.store.meters.functionCounters(functionId);
    expect([usage.invocations, usage.succeeded, usage.failed]).toEqual([1, 1, 0]);
    // Each attempt's execution: the first (metered when it was queued again) and the last.
    expect(usage.execution_ms).toBe((view.attempts[0]?.duration_ms ?? NaN) + (run?.duration_ms ?? NaN));
    expect(view.attempts[0]?.duration_ms).toBeGreaterThan(0);
    const limits = await pipeline.memory.store.limits.read(ACCOUNT);
    expect([Object.keys(limits?.leases ?? {}), limits?.queued ?? 0]).toEqual([[], 0]);
  }, 60_000);

  it("ends a run that fails every attempt failed after max_attempts, each attempt an execution, with no wait after the last", async () => {
    await create("hopeless", ALWAYS_FAILS, { max_attempts: 3, backoff_seconds: 1 });
    const from = pipeline.starts.length;
    const accepted = await invoke("hopeless", { counter: `${counter.url}hopeless` });
    const runId = String(json(accepted).run_id);
    await pipeline.settled();
    const run = await pipeline.memory.store.runs.get(runId);
    expect(run).toMatchObject({ status: "failed", attempt: 3, max_attempts: 3, error: { code: "function_error" } });
    expect(toRunView(run as NonNullable<typeof run>).attempts.map((attempt) => attempt.status)).toEqual(["failed", "failed", "failed"]);
    expect(counter.count("hopeless")).toBe(3);
    expect(callsSince(from)).toEqual([
      ["route", "StartExecutionCommand", runId],
      ["recorder", "DescribeExecutionCommand", runId],
      ["recorder", "StartExecutionCommand", `${runId}-attempt-2`],
      ["recorder", "DescribeExecutionCommand", `${runId}-attempt-2`],
      ["recorder", "StartExecutionCommand", `${runId}-attempt-3`],
    ]);
    expect(pipeline.stepFunctions.executions.get(`${runId}-attempt-3`)?.trail).toEqual(["Invoke", "Record", "Retrying", "Recorded"]);
    const limits = await pipeline.memory.store.limits.read(ACCOUNT);
    expect([Object.keys(limits?.leases ?? {}), limits?.queued ?? 0]).toEqual([[], 0]);
  }, 60_000);
});
