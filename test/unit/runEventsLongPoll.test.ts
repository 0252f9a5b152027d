import type { APIGatewayProxyEventV2 } from "aws-lambda";
import { SseParser } from "../../client/sseParser";
import { DEFAULT_PLANS } from "../../lambdas/config/plans";
import { MAX_BODY_BYTES } from "../../lambdas/config/serviceConfig";
import type { Deps } from "../../lambdas/deps";
import { runEventsRoute } from "../../lambdas/handlers/getRunEvents";
import type { HttpResult } from "../../lambdas/http/response";
import { LONG_POLL, longPolled } from "../../lambdas/aws/longPoll";
import { lambdaContext } from "../../lambdas/local/lambdaContext";
import type { RunItem } from "../../lambdas/runs/types";
import { type MemoryStore, startMemoryStore } from "../helpers/memoryStore";
import { functionItem, runItem } from "../helpers/records";

const RUN_ID = "run_01abcdefghjkmnpqrstvwxyz00";
const fn = functionItem({ account_id: "acme" });
const OPTIONS = { waitMs: 800, lingerMs: 100, retryMs: 500 };

/** The event the HTTP API hands the route's Lambda, behind the authorizer (its verdict in the context). */
function apiEvent(headers: Record<string, string> = {}, authorizer: Record<string, unknown> = { account_id: "acme", plan: "pro", admin: false, key_id: "key_1" }, query?: Record<string, string>) {
  return {
    version: "2.0",
    routeKey: "GET /runs/{run_id}/events",
    rawPath: `/runs/${RUN_ID}/events`,
    rawQueryString: "",
    headers,
    ...(query ? { queryStringParameters: query } : {}),
    pathParameters: { run_id: RUN_ID },
    isBase64Encoded: false,
    requestContext: {
      accountId: "123456789012",
      apiId: "api",
      domainName: "api.execute-api.eu-west-1.amazonaws.com",
      domainPrefix: "api",
      http: { method: "GET", path: `/runs/${RUN_ID}/events`, protocol: "HTTP/1.1", sourceIp: "203.0.113.1", userAgent: "test" },
      requestId: "req-1",
      routeKey: "GET /runs/{run_id}/events",
      stage: "$default",
      time: "",
      timeEpoch: 0,
      authorizer: { lambda: authorizer },
    },
  } as unknown as APIGatewayProxyEventV2;
}

function parse(result: HttpResult) {
  const parser = new SseParser();
  const events = parser.push(result.body ?? "").map((event) => ({ id: event.id, event: event.event, json: JSON.parse(event.data) }));
  return { events, retryMs: parser.retryMs, ids: events.map((event) => event.id) };
}

describe("GET /runs/{run_id}/events on AWS: long polling over the store", () => {
  let memory: MemoryStore;
  let handler: ReturnType<ReturnType<typeof longPolled>>;
  beforeAll(async () => {
    memory = await startMemoryStore();
    const deps = {
      store: memory.store,
      // Behind the authorizer the handler never checks a token itself; there is no live source on AWS.
      identity: { authenticate: () => Promise.reject(new Error("must not be called")), forget: () => undefined },
      runtime: {},
      config: { plans: DEFAULT_PLANS, publicUrl: null, syncWaitSeconds: 25, maxBodyBytes: MAX_BODY_BYTES },
      clock: { now: () => new Date() },
      log: () => undefined,
    } as unknown as Deps;
    handler = longPolled(runEventsRoute({ pollMs: 50 }), OPTIONS)(deps);
  });
  afterAll(() => memory.close());

  const call = (headers: Record<string, string> = {}, authorizer?: Record<string, unknown>, query?: Record<string, string>) =>
    handler(apiEvent(headers, authorizer, query), lambdaContext("getRunEvents", "req-1"));
  const put = (overrides: Partial<RunItem>) => memory.store.runs.put(runItem(fn, { run_id: RUN_ID, ...overrides }));
  const later = (ms: number, write: () => Promise<void>) => new Promise<void>((resolve, reject) => setTimeout(() => write().then(resolve, reject), ms));

  it("answers what is new as a whole text/event-stream body with a retry hint, waiting for it when nothing is", async () => {
    await put({ status: "queued", started_at: null });
    const first = await call();
    expect(first.statusCode).toBe(200);
    expect(first.headers).toMatchObject({ "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache, no-store" });
    expect(parse(first)).toMatchObject({ retryMs: 500, ids: ["status:queued"] });

    // The run starts 200 ms into the next request: that request waits for it.
    let started = Date.now();
    const [running] = await Promise.all([call({ "last-event-id": "status:queued" }), later(200, () => put({ status: "running", started_at: "2026-01-01T00:00:01.000Z" }))]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
    expect(parse(running).events).toEqual([{ id: "status:running", event: "status", json: { status: "running", at: "2026-01-01T00:00:01.000Z" } }]);

    // It ends: the log text, the final status and the result come in one answer, at once.
    started = Date.now();
    const final = { status: "succeeded" as const, logs: "LOG a\nLOG b\n", result_json: '{"ok":true}', finished_at: "2026-01-01T00:00:02.000Z", duration_ms: 1000 };
    const [ended] = await Promise.all([call({ "last-event-id": "status:running" }), later(150, () => put(final))]);
    expect(Date.now() - started).toBeLessThan(OPTIONS.waitMs);
    expect(parse(ended).events).toEqual([
      { id: "log:12", event: "log", json: { text: "LOG a\nLOG b\n" } },
      { id: "status:succeeded", event: "status", json: { status: "succeeded", at: final.finished_at } },
      { id: "result", event: "result", json: { run_id: RUN_ID, status: "succeeded", result: { ok: true }, duration_ms: 1000, finished_at: final.finished_at } },
    ]);
    // Resuming mid-log (here by the query parameter) sends exactly the rest; after the end, 204.
    expect(parse(await call({}, undefined, { last_event_id: "log:6" })).events.map((e) => [e.id, e.json.text])).toEqual([
      ["log:12", "LOG b\n"],
      ["status:succeeded", undefined],
      ["result", undefined],
    ]);
    expect((await call({ "last-event-id": "result" })).statusCode).toBe(204);
  });

  it("answers only the retry hint when nothing happens within the wait, and stops reading the store when it answers", async () => {
    await put({ status: "running" });
    const started = Date.now();
    const quiet = await call({ "last-event-id": "status:running" });
    const took = Date.now() - started;
    expect(quiet.statusCode).toBe(200);
    expect(quiet.body).toBe("retry: 500\n\n");
    expect(took).toBeGreaterThanOrEqual(OPTIONS.waitMs - 20);
    expect(took).toBeLessThan(OPTIONS.waitMs + 1000);
    // Nothing goes on after the answer (the poll timer is released).
    const calls = memory.storeCalls();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(memory.storeCalls()).toBe(calls);
  });

  it("answers errors before the stream in the API's JSON shape: another account's run, a refused token, a bad id", async () => {
    await put({ status: "running" });
    const body = (result: HttpResult) => [result.statusCode, JSON.parse(result.body ?? "{}").error?.code];
    expect(body(await call({}, { account_id: "someone-else", plan: "pro", admin: false, key_id: "key_2" }))).toEqual([404, "run_not_found"]);
    expect(body(await call({}, { error_code: "invalid_token", error_message: "The API key is not valid" }))).toEqual([401, "invalid_token"]);
    expect(body(await call({ "last-event-id": "log:-1" }))).toEqual([400, "invalid_request"]);
  });

  it("waits well within the route Lambda's timeout and API Gateway's 30 s", () => {
    expect(LONG_POLL.waitMs + LONG_POLL.lingerMs).toBeLessThanOrEqual(25_000);
  });
});
