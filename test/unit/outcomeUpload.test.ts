import { answerFor } from "../../lambdas/runner/lambdaHandler";
import { INLINE_ANSWER_BYTES, isUploadedAnswer } from "../../lambdas/runner/lambdaPackage";
import { MAX_LOG_BYTES } from "../../lambdas/runner/outputLimits";
import type { RunOutcome } from "../../lambdas/runner/protocol";
import { createS3OutcomeBucket, MAX_UPLOADED_OUTCOME_BYTES } from "../../lambdas/runtime/aws/outcomeBucket";
import { RUNNER_PROTOCOL, type RunUploads } from "../../lambdas/runner/lambdaPackage";
import { InProcessS3 } from "../helpers/inProcessS3";
import { refusedUrl, startUploadServer, type UploadServer } from "../helpers/uploadServer";

/** Upload forms that POST to `url` (an upload server that answers as told, whatever the form). */
const formsTo = (url: string): RunUploads => ({
  url,
  fields: { "X-Amz-Algorithm": "AWS4-HMAC-SHA256" },
  outcome: { key: "outcomes/run_1/outcome.json", policy: "cG9saWN5", signature: "sig" },
  artifacts: { key_prefix: "outcomes/run_1/artifact-", policy_template: "{}", signatures: [] },
});

/** The file field of a multipart form the upload server received. */
async function fileOf(upload: { headers: Record<string, unknown>; body: string }): Promise<{ text: string; type: string; key: unknown }> {
  const form = await new Request("http://s3.local/", { method: "POST", headers: { "content-type": String(upload.headers["content-type"]) }, body: upload.body }).formData();
  const file = form.get("file") as Blob;
  return { text: await file.text(), type: file.type, key: form.get("key") };
}

const stamped = (answer: object) => ({ ...answer, runner_protocol: RUNNER_PROTOCOL });

const answerBytes = (answer: object): number => Buffer.byteLength(JSON.stringify(answer), "utf8");

/** A succeeded outcome whose answer (with its protocol) is exactly `bytes` UTF-8 bytes of JSON. */
function outcomeOfBytes(bytes: number): RunOutcome {
  const make = (chars: number): RunOutcome => ({ status: "succeeded", result_json: JSON.stringify("a".repeat(chars)), logs: "LOG hi\n", browser_ms: 3, peak_memory_mb: 120 });
  const overhead = answerBytes(stamped(make(0)));
  const outcome = make(bytes - overhead);
  expect(answerBytes(stamped(outcome))).toBe(bytes);
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
    const answer = await answerFor(outcome, { uploads: formsTo(upload.url), timeLeftMs: 10_000 });
    expect(answer).toStrictEqual(stamped(outcome));
    expect(answerBytes(answer)).toBe(INLINE_ANSWER_BYTES);
    expect(upload.received).toEqual([]);
  });
});

describe("answerFor: an outcome over INLINE_ANSWER_BYTES", () => {
  it("is POSTed as its JSON text through the run's outcome form (signed for real, checked by the S3 stand-in), and the answer is the marker with its size", async () => {
    const s3 = await new InProcessS3().start();
    try {
      const uploads = await createS3OutcomeBucket(s3.client(), "bfn-run-bucket").uploads("run_1", 60);
      const outcome = outcomeOfBytes(INLINE_ANSWER_BYTES + 1);
      const answer = await answerFor(outcome, { uploads, timeLeftMs: 10_000 });
      const bytes = Buffer.byteLength(JSON.stringify(outcome));
      expect(answer).toStrictEqual({ outcome_uploaded: true, bytes, runner_protocol: RUNNER_PROTOCOL });
      expect(isUploadedAnswer(answer)).toBe(true);
      expect(s3.requests).toEqual(["POST /bfn-run-bucket", "POST outcomes/run_1/outcome.json"]);
      expect(s3.objects.get("bfn-run-bucket/outcomes/run_1/outcome.json")?.toString("utf8")).toBe(JSON.stringify(outcome));
      expect(s3.types.get("bfn-run-bucket/outcomes/run_1/outcome.json")).toBe("application/json");
    } finally {
      await s3.close();
    }
  });

  it("cannot be bigger than what the recorder reads: S3 refuses an outcome past MAX_UPLOADED_OUTCOME_BYTES, or under another key", async () => {
    const s3 = await new InProcessS3().start();
    try {
      const uploads = await createS3OutcomeBucket(s3.client(), "bfn-run-bucket").uploads("run_1", 60);
      const post = (key: string, bytes: number) => {
        const form = new FormData();
        for (const [field, value] of Object.entries(uploads.fields)) form.append(field, value);
        form.append("Policy", uploads.outcome.policy);
        form.append("X-Amz-Signature", uploads.outcome.signature);
        form.append("key", key);
        form.append("Content-Type", "application/json");
        form.append("file", new Blob([new Uint8Array(bytes)]), "outcome.json");
        return fetch(uploads.url, { method: "POST", body: form });
      };
      expect((await post("outcomes/run_1/outcome.json", MAX_UPLOADED_OUTCOME_BYTES + 1)).status).toBe(400);
      expect((await post("outcomes/run_1/other.json", 10)).status).toBe(403);
      expect((await post("outcomes/run_2/outcome.json", 10)).status).toBe(403);
      expect((await post("outcomes/run_1/outcome.json", MAX_UPLOADED_OUTCOME_BYTES)).status).toBe(204);
      expect([...s3.objects.keys()]).toEqual(["bfn-run-bucket/outcomes/run_1/outcome.json"]);
    } finally {
      await s3.close();
    }
  });

  it("counts UTF-8 bytes: 100 K euro signs (300 KB) are uploaded", async () => {
    const upload = await server(201);
    const outcome: RunOutcome = { status: "succeeded", result_json: JSON.stringify("€".repeat(100_000)), logs: "", browser_ms: 0 };
    expect(JSON.stringify(outcome).length).toBeLessThan(INLINE_ANSWER_BYTES);
    expect(await answerFor(outcome, { uploads: formsTo(upload.url), timeLeftMs: 10_000 })).toStrictEqual({ outcome_uploaded: true, bytes: answerBytes(outcome), runner_protocol: RUNNER_PROTOCOL });
    const file = await fileOf(upload.received[0] as never);
    expect(file.key).toBe("outcomes/run_1/outcome.json");
    expect(JSON.parse(file.text)).toStrictEqual(outcome);
  });

  it.each<[string, () => Promise<{ uploads: RunUploads | undefined; timeLeftMs: number }>, RegExp]>([
    ["there are no upload forms", async () => ({ uploads: undefined, timeLeftMs: 10_000 }), /the run's event has no uploads$/],
    ["the upload answers 500", async () => ({ uploads: formsTo((await server(500)).url), timeLeftMs: 10_000 }), /the upload answered HTTP 500: <Error><Code>InternalError<\/Code><\/Error>$/],
    ["the upload answers 403", async () => ({ uploads: formsTo((await server(403)).url), timeLeftMs: 10_000 }), /the upload answered HTTP 403/],
    ["nothing listens", async () => ({ uploads: formsTo(await refusedUrl()), timeLeftMs: 10_000 }), /the upload failed: fetch failed \(connect ECONNREFUSED 127\.0\.0\.1:\d+\)$/],
    ["the upload takes longer than the time left", async () => ({ uploads: formsTo((await server("hang")).url), timeLeftMs: 300 }), /the upload did not finish within 300 ms$/],
    ["no time is left", async () => ({ uploads: formsTo((await server()).url), timeLeftMs: 0 }), /no time was left to upload it$/],
  ])("becomes a small result_too_large failure with its logs when %s", async (_case, target, reason) => {
    const outcome: RunOutcome = { status: "succeeded", result_json: JSON.stringify("x".repeat(1024 * 1024)), logs: "LOG made a big one\n", browser_ms: 42, peak_memory_mb: 300 };
    const answer = await answerFor(outcome, await target());
    expect(answer).toStrictEqual({
      status: "failed",
      error: { code: "result_too_large", message: expect.stringMatching(reason) },
      logs: "LOG made a big one\n",
      browser_ms: 42,
      peak_memory_mb: 300,
      runner_protocol: RUNNER_PROTOCOL,
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
    const answer = await answerFor(outcome, { uploads: undefined, timeLeftMs: 10_000 });
    expect(answer).toStrictEqual({
      status: "failed",
      error: { code: "function_timeout", message: "The function did not finish within its timeout of 60 s" },
      logs: expect.any(String),
      browser_ms: 60_000,
      runner_protocol: RUNNER_PROTOCOL,
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
