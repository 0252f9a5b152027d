import { answerFor } from "../../lambdas/runner/lambdaHandler";
import { INLINE_ANSWER_BYTES, isUploadedAnswer, type LambdaRunAnswer } from "../../lambdas/runner/lambdaPackage";
import { MAX_LOG_BYTES } from "../../lambdas/runner/outputLimits";
import type { RunOutcome } from "../../lambdas/runner/protocol";
import { refusedUrl, startUploadServer, type UploadServer } from "../helpers/uploadServer";

const answerBytes = (answer: LambdaRunAnswer): number => Buffer.byteLength(JSON.stringify(answer), "utf8");

/** A succeeded outcome whose JSON is exactly `bytes` UTF-8 bytes. */
function outcomeOfBytes(bytes: number): RunOutcome {
  const make = (chars: number): RunOutcome => ({ status: "succeeded", result_json: JSON.stringify("a".repeat(chars)), logs: "LOG hi\n", browser_ms: 3, peak_memory_mb: 120 });
  const overhead = answerBytes(make(0));
  const outcome = make(bytes - overhead);
  expect(answerBytes(outcome)).toBe(bytes);
  return outcome;
}

let servers: UploadServer[] = [];

async function server(status: number | "hang" = 200): Promise<UploadServer> {
  const started = await startUploadServer(status);
  servers.push(started);
  return started;
}

afterEach(async () => {
  await Promise.all(servers.map((started) => started.close()));
  servers = [];
});

describe("answerFor: an outcome that fits", () => {
  it("is answered as it is, up to exactly INLINE_ANSWER_BYTES, without an upload", async () => {
    const upload = await server();
    const outcome = outcomeOfBytes(INLINE_ANSWER_BYTES);
    expect(await answerFor(outcome, { uploadUrl: upload.url, timeLeftMs: 10_000 })).toBe(outcome);
    expect(upload.received).toEqual([]);
  });
});

describe("answerFor: an outcome over INLINE_ANSWER_BYTES", () => {
  it("is PUT as its JSON text to the upload URL, and the answer is the marker with its size", async () => {
    const upload = await server(200);
    const outcome = outcomeOfBytes(INLINE_ANSWER_BYTES + 1);
    const answer = await answerFor(outcome, { uploadUrl: upload.url, timeLeftMs: 10_000 });
    expect(answer).toStrictEqual({ outcome_uploaded: true, bytes: INLINE_ANSWER_BYTES + 1 });
    expect(isUploadedAnswer(answer)).toBe(true);
    expect(upload.received).toHaveLength(1);
    const [put] = upload.received;
    expect(put).toMatchObject({ method: "PUT", path: "/outcome?X-Amz-Signature=test", body: JSON.stringify(outcome) });
    expect(put?.headers["content-type"]).toBe("application/json");
    expect(put?.headers["content-length"]).toBe(String(INLINE_ANSWER_BYTES + 1));
  });

  it("counts UTF-8 bytes: 100 K euro signs (300 KB) are uploaded", async () => {
    const upload = await server(201);
    const outcome: RunOutcome = { status: "succeeded", result_json: JSON.stringify("€".repeat(100_000)), logs: "", browser_ms: 0 };
    expect(JSON.stringify(outcome).length).toBeLessThan(INLINE_ANSWER_BYTES);
    expect(await answerFor(outcome, { uploadUrl: upload.url, timeLeftMs: 10_000 })).toStrictEqual({ outcome_uploaded: true, bytes: answerBytes(outcome) });
    expect(JSON.parse(upload.received[0]?.body ?? "null")).toStrictEqual(outcome);
  });

  it.each<[string, () => Promise<{ uploadUrl: string | undefined; timeLeftMs: number }>, RegExp]>([
    ["there is no upload URL", async () => ({ uploadUrl: undefined, timeLeftMs: 10_000 }), /the run's event has no outcome_upload_url$/],
    ["the upload answers 500", async () => ({ uploadUrl: (await server(500)).url, timeLeftMs: 10_000 }), /the upload answered HTTP 500: <Error><Code>InternalError<\/Code><\/Error>$/],
    ["the upload answers 403", async () => ({ uploadUrl: (await server(403)).url, timeLeftMs: 10_000 }), /the upload answered HTTP 403/],
    ["nothing listens", async () => ({ uploadUrl: await refusedUrl(), timeLeftMs: 10_000 }), /the upload failed: fetch failed \(connect ECONNREFUSED 127\.0\.0\.1:\d+\)$/],
    ["the upload takes longer than the time left", async () => ({ uploadUrl: (await server("hang")).url, timeLeftMs: 300 }), /the upload did not finish within 300 ms$/],
    ["no time is left", async () => ({ uploadUrl: (await server()).url, timeLeftMs: 0 }), /no time was left to upload it$/],
  ])("becomes a small result_too_large failure with its logs when %s", async (_case, target, reason) => {
    const outcome: RunOutcome = { status: "succeeded", result_json: JSON.stringify("x".repeat(1024 * 1024)), logs: "LOG made a big one\n", browser_ms: 42, peak_memory_mb: 300 };
    const answer = await answerFor(outcome, await target());
    expect(answer).toStrictEqual({
      status: "failed",
      error: { code: "result_too_large", message: expect.stringMatching(reason) },
      logs: "LOG made a big one\n",
      browser_ms: 42,
      peak_memory_mb: 300,
    });
    expect(answer).toMatchObject({ error: { message: expect.stringMatching(/^The run's outcome is 1\.0 MB of JSON, over the 200 KB a function's answer can carry, and it could not be uploaded: /) } });
    expect(answerBytes(answer)).toBeLessThanOrEqual(INLINE_ANSWER_BYTES);
  });

  it("cuts logs that escaping makes longer than the answer can carry, and keeps a failure's own code", async () => {
    // 64 KB of control characters: six bytes each once escaped into JSON (~390 KB).
    const logs = "\u0001".repeat(MAX_LOG_BYTES);
    const outcome: RunOutcome = {
      status: "failed",
      error: { code: "function_timeout", message: "The function did not finish within its timeout of 60 s", stack: "s".repeat(100_000) },
      logs,
      browser_ms: 60_000,
    };
    expect(answerBytes(outcome)).toBeGreaterThan(INLINE_ANSWER_BYTES);
    const answer = await answerFor(outcome, { uploadUrl: undefined, timeLeftMs: 10_000 });
    expect(answer).toStrictEqual({
      status: "failed",
      error: { code: "function_timeout", message: "The function did not finish within its timeout of 60 s" },
      logs: expect.any(String),
      browser_ms: 60_000,
    });
    const kept = (answer as RunOutcome).logs;
    const note = "…[output truncated]\n";
    expect(kept.endsWith(note)).toBe(true);
    expect(kept.slice(0, -note.length) === "\u0001".repeat(kept.length - note.length)).toBe(true);
    expect(answerBytes(answer)).toBeLessThanOrEqual(INLINE_ANSWER_BYTES);
    expect(answerBytes(answer)).toBeGreaterThan(INLINE_ANSWER_BYTES / 4); // halved, not emptied
  });
});

describe("isUploadedAnswer", () => {
  it.each([[{ outcome_uploaded: true, bytes: 0 }], [{ outcome_uploaded: true, bytes: 6_291_456, extra: 1 }]])("accepts %j", (value) => {
    expect(isUploadedAnswer(value)).toBe(true);
  });

  it.each([
    [null],
    ["outcome_uploaded"],
    [{ outcome_uploaded: "true", bytes: 1 }],
    [{ outcome_uploaded: true }],
    [{ outcome_uploaded: true, bytes: -1 }],
    [{ outcome_uploaded: true, bytes: 1.5 }],
    [{ outcome_uploaded: true, bytes: "1" }],
    [{ status: "succeeded", result_json: "1", logs: "", browser_ms: 0 }],
  ])("refuses %j", (value) => {
    expect(isUploadedAnswer(value)).toBe(false);
  });
});
