import { type OpenedStream, type ReceivedEvent, openEventStream } from "../helpers/eventStream";
import { expectError } from "../helpers/http";
import { type TestService, startTestService } from "../helpers/localService";

/** Logs a line, waits 1.5 s, logs another, returns. */
const SLOW_FN = `export default async function run(label: string = "x") {
  console.log("first line of " + label);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  console.log("second line of " + label);
  return { done: label };
}
`;

const FAILING_FN = `export default async function run() {
  console.log("about to fail");
  await new Promise((resolve) => setTimeout(resolve, 300));
  throw new Error("it broke");
}
`;

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
  await t.deploy("slow", SLOW_FN);
  await t.deploy("failing", FAILING_FN);
});
afterAll(() => t.destroy());

/** Starts a run without waiting for it; its id. */
async function startRun(name: string, params: Record<string, unknown> = {}): Promise<string> {
  const accepted = await t.call("POST", `/functions/${name}`, { body: params, headers: { prefer: "respond-async" } });
  expect(accepted.status).toBe(202);
  return String(accepted.body.run_id);
}

const events = (runId: string, headers: Record<string, string> = {}, token: string | null = t.adminKey, query = "") =>
  openEventStream(t.url, `/runs/${runId}/events${query}`, { token, headers });

async function readAll(stream: OpenedStream): Promise<ReceivedEvent[]> {
  await stream.ended;
  return stream.events;
}

const shape = (received: ReceivedEvent[]) => received.map((event) => (event.event === "status" ? `status:${event.json.status}` : event.event));
const logText = (received: ReceivedEvent[]) => received.filter((event) => event.event === "log").map((event) => event.json.text as string).join("");

/** Until the service holds no stream and no live-log listener. */
async function streamsReleased(): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline) {
    const now = t.service.streams();
    if (now.open === 0 && now.logWatchers === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`streams still held: ${JSON.stringify(t.service.streams())}`);
}

describe("GET /runs/{run_id}/events, against the real local service", () => {
  it("streams the log as it is written, then the statuses, then the result, and ends", async () => {
    const runId = await startRun("slow", { label: "a" });
    const stream = await events(runId);
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(stream.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const received = await readAll(stream);
    const run = (await t.call("GET", `/runs/${runId}`)).body;

    expect(shape(received)).toEqual(expect.arrayContaining(["status:queued", "status:running", "log", "status:succeeded", "result"]));
    expect(shape(received).filter((name) => name !== "log")).toEqual(["status:queued", "status:running", "status:succeeded", "result"]);
    expect(shape(received).slice(2, -2).every((name) => name === "log")).toBe(true);
    // The first line arrived while the run still had its 1.5 s wait ahead of it.
    const firstLog = received.find((event) => event.event === "log" && String(event.json.text).includes("first line of a"));
    const end = received.at(-1) as ReceivedEvent;
    expect(firstLog).toBeDefined();
    expect(firstLog?.json.text).not.toContain("second line");
    expect(firstLog?.at ?? Infinity).toBeLessThan(Date.parse(run.finished_at) - 1000);
    expect(end.at - (firstLog?.at ?? 0)).toBeGreaterThanOrEqual(1000);
    // The log events together are the run's log, and each id is the offset after its text.
    expect(logText(received)).toBe(run.logs);
    let offset = 0;
    for (const event of received.filter((e) => e.event === "log")) {
      offset += String(event.json.text).length;
      expect(event.id).toBe(`log:${offset}`);
    }
    expect(received.map((event) => event.id)).toEqual(["status:queued", "status:running", ...received.slice(2, -2).map((e) => e.id), "status:succeeded", "result"]);
    expect(received[0]?.json).toEqual({ status: "queued", at: run.queued_at });
    expect(received.at(-2)?.json).toEqual({ status: "succeeded", at: run.finished_at });
    expect(end).toMatchObject({ event: "result", id: "result" });
    expect(end.json).toEqual({ run_id: runId, status: "succeeded", result: { done: "a" }, duration_ms: run.duration_ms, finished_at: run.finished_at });
    await streamsReleased();
  });

  it("ends a failed run with an error event", async () => {
    const runId = await startRun("failing");
    const received = await readAll(await events(runId));
    expect(shape(received).filter((name) => name !== "log")).toEqual(["status:queued", "status:running", "status:failed", "error"]);
    expect(logText(received)).toContain("about to fail");
    const end = received.at(-1) as ReceivedEvent;
    expect(end.id).toBe("error");
    expect(end.json).toMatchObject({ run_id: runId, status: "failed", error: { code: "function_error", message: expect.stringContaining("it broke") } });
  });

  it("resumes after Last-Event-ID mid-run and after the run ended: exactly the rest, nothing twice", async () => {
    const runId = await startRun("slow", { label: "b" });
    const first = await events(runId);
    const seen = await first.waitFor(3);
    first.close();
    const lastLog = seen.at(-1) as ReceivedEvent;
    expect(lastLog.event).toBe("log");
    expect(lastLog.json.text).toContain("first line of b");
    expect(lastLog.json.text).not.toContain("second line");

    // Mid-run: the rest of the log, the end; no status already seen, no line twice.
    const rest = await readAll(await events(runId, { "last-event-id": lastLog.id ?? "" }));
    expect(shape(rest).filter((name) => name !== "log")).toEqual(["status:succeeded", "result"]);
    const run = (await t.call("GET", `/runs/${runId}`)).body;
    expect(String(lastLog.json.text) + logText(rest)).toBe(run.logs);
    expect(logText(rest)).toContain("second line of b");

    // After the end, from each kind of id (the query parameter works as the header does).
    const afterLog = await readAll(await events(runId, {}, t.adminKey, `?last_event_id=${encodeURIComponent(lastLog.id ?? "")}`));
    expect(afterLog.map((event) => event.id)).toEqual(rest.map((event) => event.id));
    expect(logText(afterLog)).toBe(logText(rest));
    const afterRunning = await readAll(await events(runId, { "last-event-id": "status:running" }));
    expect(shape(afterRunning)).toEqual(["log", "status:succeeded", "result"]);
    expect(logText(afterRunning)).toBe(run.logs);
    expect(shape(await readAll(await events(runId, { "last-event-id": "status:succeeded" })))).toEqual(["result"]);
    // The whole run again from the start: the same ids a live stream would have ended with.
    const replay = await readAll(await events(runId));
    expect(shape(replay)).toEqual(["status:queued", "status:running", "log", "status:succeeded", "result"]);
    expect(replay[2]?.id).toBe(`log:${run.logs.length}`);
    // Nothing is left after the end: 204, which tells an EventSource to stop reconnecting.
    const done = await events(runId, { "last-event-id": "result" });
    expect(done.status).toBe(204);
    await streamsReleased();
  });

  it("answers errors before the stream as JSON: 401 without a token, 404 for another account's run, 400 for a bad id", async () => {
    const runId = await startRun("slow", { label: "c" });
    const other = await t.newAccount("events-other");
    for (const [stream, status, code] of [
      [await events(runId, {}, null), 401, "missing_token"],
      [await events(runId, {}, other), 404, "run_not_found"],
      [await events("run_00000000000000000000000000"), 404, "run_not_found"],
      [await events(runId, { "last-event-id": "log:abc" }), 400, "invalid_request"],
    ] as const) {
      expect(stream.headers.get("content-type")).toContain("application/json");
      expectError({ status: stream.status, headers: stream.headers, text: stream.text, body: JSON.parse(stream.text) }, status, code);
    }
    await readAll(await events(runId));
  });

  it("releases the stream and its live-log listener when the client goes away mid-run; later runs stream as before", async () => {
    const runId = await startRun("slow", { label: "d" });
    const stream = await events(runId);
    await stream.waitFor(3);
    expect(t.service.streams()).toEqual({ open: 1, logWatchers: 1 });
    stream.close();
    await streamsReleased();
    // The run itself went on and ended.
    const run = await t.call("GET", `/runs/${runId}`);
    expect(["running", "succeeded"]).toContain(run.body.status);
    const again = await readAll(await events(await startRun("slow", { label: "e" })));
    expect(again.at(-1)?.json).toMatchObject({ result: { done: "e" } });
    await streamsReleased();
  });

  it("caps the streams one account holds open (429 too_many_streams), others unaffected", async () => {
    const key = await t.newAccount("events-capped");
    await t.deploy("slow", SLOW_FN, {}, key);
    const accepted = await t.call("POST", "/functions/slow", { token: key, body: {}, headers: { prefer: "respond-async" } });
    const runId = String(accepted.body.run_id);
    const open = await Promise.all(Array.from({ length: 20 }, () => events(runId, {}, key)));
    expect(open.every((stream) => stream.status === 200)).toBe(true);
    const refused = await events(runId, {}, key);
    expectError({ status: refused.status, headers: refused.headers, text: refused.text, body: JSON.parse(refused.text) }, 429, "too_many_streams");
    expect(refused.headers.get("retry-after")).toBe("5");
    // Another account streams as before.
    const mine = await readAll(await events(await startRun("slow", { label: "g" })));
    expect(mine.at(-1)?.json).toMatchObject({ result: { done: "g" } });
    for (const stream of open) stream.close();
    await streamsReleased();
  });

  it("ends open streams when the service stops, without holding the stop up", async () => {
    const runId = await startRun("slow", { label: "f" });
    const stream = await events(runId);
    await stream.waitFor(1);
    const started = Date.now();
    await t.stop();
    await stream.ended;
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
