import { principalContext } from "../../lambdas/aws/authorizerContext";
import { envelopeBytes, fitLambdaEnvelope, LAMBDA_RESPONSE_LIMIT_BYTES } from "../../lambdas/aws/lambdaEnvelope";
import { lazyRoute } from "../../lambdas/aws/lazyHandlers";
import { DEFAULT_PLANS } from "../../lambdas/config/plans";
import { MAX_BODY_BYTES } from "../../lambdas/config/serviceConfig";
import type { Deps } from "../../lambdas/deps";
import { getRun } from "../../lambdas/handlers/getRun";
import { finishedResponse } from "../../lambdas/invoke/invokeResponse";
import type { HttpResult } from "../../lambdas/http/response";
import { lambdaContext } from "../../lambdas/local/lambdaContext";
import { RunQueueState } from "../../lambdas/queue/queueState";
import { MAX_LOG_BYTES, MAX_RESULT_BYTES } from "../../lambdas/runner/outputLimits";
import { MAX_EXECUTION_INPUT_BYTES } from "../../lambdas/runtime/aws/runExecutions";
import type { RunItem } from "../../lambdas/runs/types";
import { MAX_STACK_CHARS } from "../../lambdas/runs/toRunView";
import { apiGatewayEvent } from "../helpers/apiGatewayEvent";
import { startMemoryStore, type MemoryStore } from "../helpers/memoryStore";

// #23.2: a route Lambda's answer is JSON with the body escaped in it, and Lambda refuses one
// over 6 MiB (API Gateway then answers a bare 500, and a retry runs the automation again). At the
// inline result cap, with the worst escaping there is (quotes, backslashes, control characters)
// in the result, the params, the logs and the errors, both the invocation's answer and
// GET /runs/{id} fit, measured as Lambda serializes them; the client gets the same bytes.

const principal = principalContext({ account_id: "acme", plan: "pro", admin: false, key_id: "key_1" });

/** A JSON string value of exactly `bytes` bytes of JSON text, of the characters that escape worst. */
function worstJsonString(bytes: number): string {
  // `"` and `\` take 2 bytes in JSON and 4 in an escaped body; \u0001 takes 6 and 7.
  const unit = '"\\\u0001';
  const unitBytes = Buffer.byteLength(JSON.stringify(unit)) - 2;
  const units = Math.floor((bytes - 2) / unitBytes);
  let text = unit.repeat(units);
  while (Buffer.byteLength(JSON.stringify(text)) < bytes - 1) text += '"';
  if (Buffer.byteLength(JSON.stringify(text)) < bytes) text += "x";
  return text;
}

/** Plain text of `bytes` control characters (each 6 bytes in JSON). */
const controls = (chars: number) => "\u0001".repeat(chars);

function worstRun(resultBytes: number): RunItem {
  const result = worstJsonString(resultBytes);
  const resultJson = JSON.stringify(result);
  const attemptError = { code: "function_error", message: controls(4096) };
  return {
    run_id: "run_01jzzzzzzzzzzzzzzzzzzzzzzz",
    account_id: "acme",
    function_id: "fn_01jzzzzzzzzzzzzzzzzzzzzzzz",
    function_name: "big",
    version: 1,
    trigger: "http",
    status: "succeeded",
    // The workflow's input bounds a run's params on AWS.
    params: { text: worstJsonString(MAX_EXECUTION_INPUT_BYTES - 64) },
    result_json: resultJson,
    error: null,
    logs: controls(MAX_LOG_BYTES),
    queued_at: "2026-11-27T12:00:00.000Z",
    deadline_at: "2026-11-27T12:30:00.000Z",
    started_at: "2026-11-27T12:00:00.000Z",
    finished_at: "2026-11-27T12:00:10.000Z",
    duration_ms: 10_000,
    browser_ms: 10_000,
    peak_memory_mb: 900,
    memory_mb: 1024,
    request_origin: null,
    sdk_version: null,
    attempt: 10,
    max_attempts: 10,
    attempts: Array.from({ length: 9 }, (_, i) => ({
      attempt: i + 1,
      status: "failed" as const,
      error: { ...attemptError, stack: controls(MAX_STACK_CHARS) },
      started_at: "2026-11-27T12:00:00.000Z",
      finished_at: "2026-11-27T12:00:01.000Z",
      duration_ms: 1000,
    })),
  };
}

/** The body the client gets from API Gateway (which decodes a base64 answer). */
const clientBody = (answer: HttpResult) => (answer.isBase64Encoded ? Buffer.from(answer.body ?? "", "base64").toString("utf8") : (answer.body ?? ""));

describe("answers that must fit Lambda's 6 MiB envelope", () => {
  let memory: MemoryStore;
  let route: ReturnType<typeof lazyRoute>;
  beforeAll(async () => {
    memory = await startMemoryStore();
    const deps = {
      store: memory.store,
      queue: new RunQueueState(),
      config: { plans: DEFAULT_PLANS, publicUrl: null, syncWaitSeconds: 1, maxBodyBytes: MAX_BODY_BYTES },
      log: () => undefined,
    } as unknown as Deps;
    route = lazyRoute(getRun, () => deps);
  });
  afterAll(async () => {
    await memory.close();
  });

  const getRunAnswer = (runId: string) => route(apiGatewayEvent(principal, "GET", `/runs/${runId}`, undefined, { run_id: runId }), lambdaContext("getRun", "req"));

  it("GET /runs/{id} of a run at the inline cap, escaping at its worst, fits, and the client gets the run", async () => {
    const run = worstRun(MAX_RESULT_BYTES);
    expect(Buffer.byteLength(run.result_json ?? "")).toBe(MAX_RESULT_BYTES);
    await memory.store.runs.put(run);
    const answer = await getRunAnswer(run.run_id);
    expect(answer.statusCode).toBe(200);
    const bytes = envelopeBytes(answer);
    expect(bytes).toBeLessThanOrEqual(LAMBDA_RESPONSE_LIMIT_BYTES);
    const view = JSON.parse(clientBody(answer)) as { result: unknown; logs: string };
    expect(view.result).toBe(JSON.parse(run.result_json ?? "null"));
    expect(view.logs).toBe(run.logs);
  }, 60_000);

  it("the invocation's answer of a result at the cap fits, the same bytes for the client", () => {
    const run = worstRun(MAX_RESULT_BYTES);
    // The invocation route's answer goes through the same wrapper (lazyRoute) as GET /runs/{id}'s.
    const answer = fitLambdaEnvelope(finishedResponse(run), "req");
    expect(envelopeBytes(answer)).toBeLessThanOrEqual(LAMBDA_RESPONSE_LIMIT_BYTES);
    expect(clientBody(answer)).toBe(run.result_json);
  });

  it("answers a record over the limit (kept before the cap was lowered) with the API's 500 result_too_large", async () => {
    const run = { ...worstRun(1024), run_id: "run_01jyyyyyyyyyyyyyyyyyyyyyyy", result_json: JSON.stringify(worstJsonString(6 * 1024 * 1024)) };
    await memory.store.runs.put(run);
    const answer = await getRunAnswer(run.run_id);
    expect(answer.statusCode).toBe(500);
    expect(JSON.parse(answer.body ?? "{}")).toMatchObject({ error: { code: "result_too_large", details: { limit: LAMBDA_RESPONSE_LIMIT_BYTES } } });
  }, 60_000);

  it("leaves small answers as they are", async () => {
    const run = { ...worstRun(1024), run_id: "run_01jxxxxxxxxxxxxxxxxxxxxxxx", params: {}, logs: "hi", attempts: [] };
    await memory.store.runs.put(run);
    const answer = await getRunAnswer(run.run_id);
    expect(answer.statusCode).toBe(200);
    expect(answer.isBase64Encoded).toBeUndefined();
    expect(JSON.parse(answer.body ?? "{}")).toMatchObject({ run_id: run.run_id, logs: "hi" });
  });
});
