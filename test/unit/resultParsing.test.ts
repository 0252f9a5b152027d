/**
 * Issue #26: a run's big result is parsed (and redacted) on a thread of its own, not on the
 * thread that serves requests, and accounts take turns there. Real worker thread, real frames;
 * nothing timed: the signals are which thread parsed, and that push() returns before the frame
 * is delivered (the reader's thread is free meanwhile).
 */
import { threadId } from "node:worker_threads";
import { gunzipSync } from "node:zlib";
import { encodeFrame, FrameReader } from "../../lambdas/runner/frames";
import { MAX_FRAME_BYTES } from "../../lambdas/runner/protocol";
import { MAX_JSON_DEPTH } from "../../lambdas/runner/outputLimits";
import { OFF_THREAD_MIN_BYTES, ResultParser } from "../../lambdas/runtime/local/resultParsing/resultParser";
import { deliveryBody, deliveryBodyInput } from "../../lambdas/webhooks/deliveryBody";
import { functionItem, runItem } from "../helpers/records";

const SECRET = "hunter2-card-4111";

/** A `done` frame whose result is ~3 MB of many small objects, one holding the secret. */
function bigDone(runId: string) {
  const items = Array.from({ length: 60_000 }, (_, i) => ({ i, name: `item-${i}`, tags: ["a", "b"] }));
  const result = { items, leaked: SECRET };
  return { type: "done", runId, outcome: { status: "succeeded", result_json: JSON.stringify(result), logs: "", browser_ms: 0 } };
}

describe("parsing workers' big frames off the service's thread", () => {
  const parser = new ResultParser();
  afterAll(() => parser.close());

  it("parses and redacts a huge result on the parsing thread, and delivers the frames behind it after it, in order", async () => {
    const delivered: { message: unknown; resultJson: string | undefined }[] = [];
    const problems: string[] = [];
    let onDelivered: () => void = () => undefined;
    const reader = new FrameReader(
      MAX_FRAME_BYTES,
      (message, resultJson) => {
        delivered.push({ message, resultJson });
        if (delivered.length === 2) onDelivered();
      },
      (problem) => problems.push(problem),
      MAX_JSON_DEPTH,
      parser.frames(() => "acct", () => [SECRET], MAX_JSON_DEPTH),
    );
    const big = encodeFrame(bigDone("run-1"));
    expect(big.length).toBeGreaterThan(2 * 1024 * 1024);
    const both = new Promise<void>((resolve) => (onDelivered = resolve));
    reader.push(Buffer.concat([big, encodeFrame({ type: "idle", runId: "run-1", leftover: [] })]));
    // On today's code the reader parsed it right here, holding the thread: nothing is delivered yet.
    expect(delivered).toHaveLength(0);
    await both;
    expect(problems).toEqual([]);
    expect(delivered.map(({ message }) => (message as { type: string }).type)).toEqual(["done", "idle"]);
    expect(delivered[0]?.resultJson).toBe("valid");
    const resultJson = (delivered[0]?.message as { outcome: { result_json: string } }).outcome.result_json;
    expect(resultJson).not.toContain(SECRET);
    expect((JSON.parse(resultJson) as { leaked: string }).leaked).toBe("[secret]");
    expect(parser.stats.parsed).toBe(1);
    expect(parser.stats.threadId).toBeGreaterThan(0);
    expect(parser.stats.threadId).not.toBe(threadId);
  });

  it("keeps a small frame on the reader's thread (delivered within push)", () => {
    const delivered: unknown[] = [];
    const reader = new FrameReader(MAX_FRAME_BYTES, (message) => delivered.push(message), () => undefined, MAX_JSON_DEPTH, parser.frames(() => "acct", () => [], MAX_JSON_DEPTH));
    const small = encodeFrame({ type: "done", runId: "r", outcome: { status: "succeeded", result_json: '{"n":1}', logs: "", browser_ms: 0 } });
    expect(small.length).toBeLessThan(OFF_THREAD_MIN_BYTES);
    const before = parser.stats.parsed;
    reader.push(small);
    expect(delivered).toHaveLength(1);
    expect(parser.stats.parsed).toBe(before);
  });

  it("fails a frame nested too deeply, or not JSON, as the reader would", async () => {
    const deep = Buffer.from(`{"type":"done","pad":"${"x".repeat(OFF_THREAD_MIN_BYTES)}","v":${"[".repeat(100)}${"]".repeat(100)}}`);
    expect(await parser.parse("acct", deep, MAX_JSON_DEPTH, [])).toMatchObject({ ok: false, kind: "too_deep" });
    const broken = Buffer.from(`{"type":"done","pad":"${"x".repeat(OFF_THREAD_MIN_BYTES)}"`);
    expect(await parser.parse("acct", broken, MAX_JSON_DEPTH, [])).toMatchObject({ ok: false, kind: "not_json" });
    const notJsonResult = encodeFrame({ type: "done", runId: "r", outcome: { status: "succeeded", result_json: `{"a":"${"x".repeat(OFF_THREAD_MIN_BYTES)}"`, logs: "", browser_ms: 0 } }).subarray(4);
    expect(await parser.parse("acct", notJsonResult, MAX_JSON_DEPTH, [])).toMatchObject({ ok: true, resultJson: "invalid" });
  });

  it("takes accounts in turn: one account's backlog of big results waits behind another account's one", async () => {
    const body = encodeFrame(bigDone("r")).subarray(4);
    const order: string[] = [];
    const parse = (account: string) => parser.parse(account, body, MAX_JSON_DEPTH, []).then(() => order.push(account));
    await Promise.all([parse("hog"), parse("hog"), parse("hog"), parse("neighbour")]);
    // The hog's first was already on the thread; the neighbour's comes next, ahead of the hog's backlog.
    expect(order).toEqual(["hog", "neighbour", "hog", "hog"]);
  });

  it("builds a webhook body on the thread, the same bytes as built inline, in the account's turn behind other accounts' frames", async () => {
    const run = runItem(functionItem(), { status: "succeeded", finished_at: "2026-01-01T00:00:05.000Z", result_json: JSON.stringify({ ok: 1 }), logs: "hello\n" });
    const built = parser.stats.bodies;
    expect(await parser.build("acct", deliveryBodyInput("run.succeeded", run))).toBe(deliveryBody("run.succeeded", run));
    expect(parser.stats.bodies).toBe(built + 1);
    // A body that cannot be built (a record no version writes) rejects, with why; the thread goes on.
    let params: unknown = 1;
    for (let i = 0; i < 100_000; i++) params = { p: params };
    await expect(parser.build("acct", deliveryBodyInput("run.succeeded", { ...run, params: params as Record<string, unknown> }))).rejects.toThrow(/call stack|depth/i);
    // A hog's backlog of big frames does not hold a neighbour's body back.
    const frame = encodeFrame(bigDone("r")).subarray(4);
    const order: string[] = [];
    await Promise.all([
      ...[1, 2, 3].map(() => parser.parse("hog", frame, MAX_JSON_DEPTH, []).then(() => order.push("hog"))),
      parser.build("neighbour", deliveryBodyInput("run.succeeded", run)).then(() => order.push("neighbour")),
    ]);
    expect(order).toEqual(["hog", "neighbour", "hog", "hog"]);
  });

  it("gzips a big result for the store on the thread, as blobParts would, moving the bytes back", async () => {
    const text = JSON.stringify(bigDone("r"));
    const gzipped = parser.stats.gzipped;
    const bytes = await parser.gzip("acct", text);
    expect(bytes.byteLength).toBeLessThan(text.length);
    expect(gunzipSync(bytes).toString("utf8")).toBe(text);
    expect(parser.stats.gzipped).toBe(gzipped + 1);
  });
});

describe("the result thread with CPU shares to charge", () => {
  it("closes while its thread is still starting (a move waiting for the thread's id does not wait for ever), and charges and gives back each account's seat", async () => {
    const moves: string[] = [];
    const shares = {
      kind: "cgroup" as const,
      place: async () => async () => undefined,
      charge: async (account: string) => {
        moves.push(`charge ${account}`);
        return async () => void moves.push(`release ${account}`);
      },
      background: async () => undefined,
    };
    const charged = new ResultParser();
    charged.chargeTo(shares);
    expect(gunzipSync(await charged.gzip("one", "x".repeat(1000))).toString("utf8")).toBe("x".repeat(1000));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(moves).toEqual(["charge one", "release one"]);
    await charged.close();

    const closing = new ResultParser();
    closing.chargeTo(shares);
    // Its thread is made now, and says its id only once it has started: the service stops first.
    const job = closing.gzip("two", "y".repeat(1000)).then(
      () => "gzipped",
      (error: Error) => error.message,
    );
    await closing.close();
    expect(await job).toBe("the service is stopping");
  }, 20_000);
});
