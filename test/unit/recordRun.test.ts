import { InProcessKms } from "../helpers/inProcessKms";
import { createKmsSecretBox } from "../../lambdas/secrets/kmsSecretBox";
import type { S3Client } from "@aws-sdk/client-s3";
import { createS3OutcomeBucket, type OutcomeBucket } from "../../lambdas/runtime/aws/outcomeBucket";
import { caughtEnding, makeRunRecorder } from "../../lambdas/runtime/aws/recordRun";
import type { RunItem } from "../../lambdas/runs/types";
import { functionItem, runItem } from "../helpers/records";
import { type MemoryStore, startMemoryStore } from "../helpers/memoryStore";

// The recorder: what the run workflow hands it is parsed as untrusted, and only the run the
// execution names changes.

const limits = { timeout_seconds: 60, memory_mb: 1024 };
const STARTED = "2026-03-01T10:00:00.000Z";
const ENDED = "2026-03-01T10:00:02.500Z";
/** Step Functions' cause of a Lambda.Unknown before Lambda's payload. */
const UNKNOWN = "The cause could not be determined because Lambda did not return an error type. Returned payload: ";


/** The recorder's answer to the workflow for a run it ended (nothing more to do: no retry, no wait for Lambda). */
const answered = (status: string) => ({ status, retry_at: null, account_id: null, reinvoke: false });
describe("caughtEnding: the run's ending from an error Step Functions caught", () => {
  it.each([
    ["States.Timeout", "", "timed_out", "function_timeout"],
    ["Lambda.TooManyRequestsException", "Rate Exceeded.", "failed", "concurrency_limit_exceeded"],
    ["Lambda.ResourceNotFoundException", "Function not found", "failed", "function_crashed"],
    ["States.DataLimitExceeded", "", "failed", "result_too_large"],
    ["RunNotRecorded", "", "failed", "internal_error"],
    ["States.Runtime", "bad path", "failed", "internal_error"],
    ["Lambda.ServiceException", "oops", "failed", "function_crashed"],
    ["Sandbox.Timedout", JSON.stringify({ errorType: "Sandbox.Timedout", errorMessage: "Task timed out after 65.00 seconds" }), "timed_out", "function_timeout"],
    ["Runtime.ExitError", JSON.stringify({ errorType: "Runtime.ExitError", errorMessage: "Runtime exited with error: exit status 3" }), "failed", "function_crashed"],
    ["Runtime.OutOfMemory", JSON.stringify({ errorType: "Runtime.OutOfMemory", errorMessage: "" }), "failed", "function_crashed"],
    ["Function.ResponseSizeTooLarge", JSON.stringify({ errorType: "Function.ResponseSizeTooLarge", errorMessage: "Response payload size (7000000 bytes) exceeded" }), "failed", "result_too_large"],
    // Lambda.Unknown (no error type in Lambda's answer): Step Functions' sentence, then the payload.
    ["Lambda.Unknown", `${UNKNOWN}{"errorMessage":"2022-01-13T00:58:08.879Z 28931c40 Task timed out after 60.06 seconds"}`, "timed_out", "function_timeout"],
    ["Lambda.Unknown", `${UNKNOWN}{"errorMessage":"RequestId: 16f8d3a2 Process exited before completing request"}`, "failed", "function_crashed"],
    ["Lambda.Unknown", `${UNKNOWN}{"errorMessage":"RequestId: 16f8d3a2 Error: Runtime exited with error: signal: killed"}`, "failed", "function_crashed"],
    ["Lambda.Unknown", `${UNKNOWN}not json`, "failed", "function_crashed"],
    // A function's own error named like Lambda's throttle (user code chooses the name): its cause is its JSON payload.
    ["Lambda.TooManyRequestsException", JSON.stringify({ errorType: "Lambda.TooManyRequestsException", errorMessage: "spoofed" }), "failed", "function_crashed"],
  ])("%s → %s / %s", (error, cause, status, code) => {
    expect(caughtEnding(error, cause, limits)).toMatchObject({ status, error: { code }, result_json: null });
  });

  it("reads a Lambda.Unknown's payload for what stopped the function: a timeout, memory, or its message (bounded)", () => {
    const timeout = caughtEnding("Lambda.Unknown", `${UNKNOWN}{"errorMessage":"x Task timed out after 60.06 seconds"}`, limits);
    expect(timeout).toMatchObject({ ran: true, error: { message: "The function did not finish within its timeout of 60 s" } });
    const exited = caughtEnding("Lambda.Unknown", `${UNKNOWN}{"errorMessage":"RequestId: r Process exited before completing request"}`, limits);
    expect(exited.error?.message).toBe("The function's process exited before it answered, most often because it ran out of memory: its limit is 1024 MB");
    const killed = caughtEnding("Lambda.Unknown", `${UNKNOWN}{"errorMessage":"RequestId: r Error: Runtime exited with error: signal: killed"}`, limits);
    expect(killed.error?.message).toBe("The function ran out of memory: its limit is 1024 MB");
    const other = caughtEnding("Lambda.Unknown", `${UNKNOWN}${JSON.stringify({ errorMessage: `boom ${"y".repeat(20_000)}` })}`, limits);
    expect(other.error?.message).toMatch(/^The function's process crashed: boom y+$/);
    expect(other.error?.message.length).toBeLessThanOrEqual(1100);
    // A timeout's words past the cause's limit are not read.
    const late = caughtEnding("Lambda.Unknown", `${UNKNOWN}${"z".repeat(40_000)} Task timed out after 60.06 seconds`, limits);
    expect(late).toMatchObject({ status: "failed", error: { code: "function_crashed" } });
  });

  it("says which endings never ran (nothing to meter)", () => {
    expect(caughtEnding("Lambda.TooManyRequestsException", "Rate Exceeded.", limits).ran).toBe(false);
    expect(caughtEnding("Lambda.ResourceNotFoundException", "Function not found", limits).ran).toBe(false);
    expect(caughtEnding("Lambda.TooManyRequestsException", '{"errorType":"x"}', limits).ran).toBe(true);
    expect(caughtEnding("States.Timeout", "", limits).ran).toBe(true);
  });
});

describe("the recorder Lambda", () => {
  let memory: MemoryStore;
  const uploads = new Map<string, string>();
  /** What S3's HEAD says of `<run_id>/<name>` (absent: no such object); every HEAD asked, in order. */
  const heads = new Map<string, { bytes: number; contentType: string | null }>();
  const headsAsked: string[] = [];
  const deleted: string[] = [];
  const outcomes: OutcomeBucket = {
    uploadUrl: async () => "unused",
    artifactUpload: async () => ({ url: "unused", fields: {}, keyPrefix: "" }),
    artifactHead: async (runId, name) => {
      headsAsked.push(`${runId}/${name}`);
      return heads.get(`${runId}/${name}`) ?? null;
    },
    artifactDownloadUrl: async () => "unused",
    deleteArtifact: async (runId, name) => void deleted.push(`${runId}/${name}`),
    read: async (runId, maxBytes) => {
      const text = uploads.get(runId);
      if (text === undefined) return null;
      return Buffer.byteLength(text) > maxBytes ? { tooLarge: Buffer.byteLength(text) } : { text };
    },
  };
  const logs: string[] = [];
  let recorder: ReturnType<typeof makeRunRecorder>;
  const KEY_ARN = "arn:aws:kms:eu-west-1:123456789012:key/k";
  const fn = functionItem({ function_id: "fn_own", account_id: "acct" });

  beforeAll(async () => {
    memory = await startMemoryStore();
    const secretBox = createKmsSecretBox(new InProcessKms(KEY_ARN, "AROAEXAMPLEEXECUTION").client("recorder"), KEY_ARN, (id) => `AROAEXAMPLEEXECUTION:bfn-${id}`);
    recorder = makeRunRecorder({ store: memory.store, clock: { now: () => new Date(ENDED) }, log: (line) => void logs.push(line), outcomes, secretBox });
  });
  afterAll(() => memory?.close());

  async function running(runId: string): Promise<RunItem> {
    const run = runItem(fn, { run_id: runId, status: "running", queued_at: STARTED, started_at: STARTED });
    await memory.store.runs.put(run);
    return run;
  }
  const request = (runId: string, ended: unknown) => ({ run_id: runId, timeout_seconds: 60, started_at: STARTED, ended_at: ENDED, ended });

  it("records an answer field by field: its duration from Step Functions' clock, browser time bounded by it", async () => {
    await running("run_a");
    const victim = await running("run_victim");
    const answer = { status: "succeeded", result_json: "[1]", logs: "LOG x\n", browser_ms: 99_999_999, peak_memory_mb: 99_999, run_id: "run_victim", account_id: "other", pk: "RUN#run_victim" };
    expect(await recorder(request("run_a", { answer }))).toEqual(answered("succeeded"));
    expect(await memory.store.runs.get("run_a")).toMatchObject({
      status: "succeeded", result_json: "[1]", logs: "LOG x\n", duration_ms: 2500, browser_ms: 2500, peak_memory_mb: 1024, account_id: "acct", finished_at: ENDED,
    });
    expect(await memory.store.runs.get("run_victim")).toEqual(victim);
  });

  it("reads an uploaded outcome, and fails one that is missing or over the cap", async () => {
    await running("run_up");
    uploads.set("run_up", JSON.stringify({ status: "succeeded", result_json: JSON.stringify("z".repeat(300_000)), logs: "", browser_ms: 1 }));
    expect(await recorder(request("run_up", { answer: { outcome_uploaded: true, bytes: 300_050 } }))).toEqual(answered("succeeded"));
    expect((await memory.store.runs.get("run_up"))?.result_json).toHaveLength(300_002);

    await running("run_gone");
    expect(await recorder(request("run_gone", { answer: { outcome_uploaded: true, bytes: 5 } }))).toEqual(answered("failed"));
    expect(await memory.store.runs.get("run_gone")).toMatchObject({ error: { code: "function_crashed", message: expect.stringMatching(/uploaded its outcome, but there is none/) } });

    await running("run_huge");
    uploads.set("run_huge", "x".repeat(14_000_000));
    await recorder(request("run_huge", { answer: { outcome_uploaded: true, bytes: 14_000_000 } }));
    expect(await memory.store.runs.get("run_huge")).toMatchObject({ status: "failed", error: { code: "result_too_large" } });
  });

  it("fails an answer nested past the depth cap as result_too_deep: an uploaded outcome, its result, or an inline answer", async () => {
    const deep = "[".repeat(100_000) + "]".repeat(100_000);
    // Another function's runs: fn_own's are counted below.
    const deepFn = functionItem({ function_id: "fn_deep", account_id: "acct" });
    const running = (runId: string) => memory.store.runs.put(runItem(deepFn, { run_id: runId, status: "running", queued_at: STARTED, started_at: STARTED }));
    await running("run_deep_upload");
    uploads.set("run_deep_upload", `{"status":"succeeded","result_json":"1","logs":"","browser_ms":1,"extra":${deep}}`);
    expect(await recorder(request("run_deep_upload", { answer: { outcome_uploaded: true, bytes: 200_060 } }))).toEqual(answered("failed"));
    await running("run_deep_result");
    uploads.set("run_deep_result", JSON.stringify({ status: "succeeded", result_json: deep, logs: "", browser_ms: 1 }));
    expect(await recorder(request("run_deep_result", { answer: { outcome_uploaded: true, bytes: 200_060 } }))).toEqual(answered("failed"));
    await running("run_deep_inline");
    let extra: unknown = 1;
    for (let i = 0; i < 100_000; i++) extra = [extra];
    expect(await recorder(request("run_deep_inline", { answer: { status: "succeeded", result_json: "1", logs: "", browser_ms: 1, extra } }))).toEqual(answered("failed"));
    for (const runId of ["run_deep_upload", "run_deep_result", "run_deep_inline"]) {
      expect(await memory.store.runs.get(runId)).toMatchObject({ status: "failed", result_json: null, error: { code: "result_too_deep" } });
    }
  });

  it("ends a run with what Step Functions caught, and calls an answer that is no outcome a crash", async () => {
    await running("run_caught");
    await recorder({ ...request("run_caught", { Error: "States.Timeout", Cause: "" }), ended_at: "2026-03-01T10:02:00.000Z" });
    // Metered at most its timeout (60 s), not the workflow's two minutes.
    expect(await memory.store.runs.get("run_caught")).toMatchObject({ status: "timed_out", error: { code: "function_timeout", message: expect.stringContaining("60 s") }, duration_ms: 60_000 });
    await running("run_junk");
    await recorder(request("run_junk", { answer: { status: "pwned" } }));
    expect(await memory.store.runs.get("run_junk")).toMatchObject({ status: "failed", error: { code: "function_crashed" } });
  });

  it("changes nothing of a run that ended already, and ignores what is not a record request", async () => {
    const ended = { ...(await running("run_done")), status: "failed" as const, error: { code: "function_crashed", message: "settled" }, finished_at: STARTED, duration_ms: 0 };
    await memory.store.runs.put(ended);
    expect(await recorder(request("run_done", { answer: { status: "succeeded", result_json: "1", logs: "", browser_ms: 0 } }))).toEqual(answered("failed"));
    expect(await memory.store.runs.get("run_done")).toEqual(ended);
    expect(await recorder({ run_id: "run_done" })).toEqual(answered("ignored"));
    expect(await recorder(request("run_nobody", { answer: null }))).toEqual(answered("unknown"));
    expect((await memory.store.meters.functionCounters("fn_own")).invocations).toBe(6);
  });
  describe("the artifacts a run reports: recorded as S3 has them, at most 100 files and 100 MB", () => {
    const MB = 1024 * 1024;
    const artFn = functionItem({ function_id: "fn_art", account_id: "acct" });
    const succeeded = (artifacts: unknown) => ({ answer: { status: "succeeded", result_json: "1", logs: "", browser_ms: 0, artifacts } });
    async function recordWith(runId: string, artifacts: unknown) {
      await memory.store.runs.put(runItem(artFn, { run_id: runId, status: "running", queued_at: STARTED, started_at: STARTED }));
      headsAsked.length = 0;
      deleted.length = 0;
      expect(await recorder(request(runId, succeeded(artifacts)))).toEqual(answered("succeeded"));
      const recorded = await memory.store.artifacts.list(runId, new Date(ENDED));
      return recorded.map(({ name, bytes, content_type }) => ({ name, bytes, content_type }));
    }
    const meteredBytes = async () => (await memory.store.meters.functionCounters("fn_art")).artifact_bytes;

    it("records at most 100 of 101 files reported, and asks S3 of those 100 only", async () => {
      const names = Array.from({ length: 101 }, (_, i) => `shot-${String(i).padStart(3, "0")}.png`);
      for (const name of names) heads.set(`run_many/${name}`, { bytes: 1000, contentType: "image/png" });
      const before = await meteredBytes();
      const recorded = await recordWith("run_many", names);
      expect(recorded.map((a) => a.name)).toEqual(names.slice(0, 100));
      expect(headsAsked).toEqual(names.slice(0, 100).map((name) => `run_many/${name}`));
      expect(deleted).toEqual([`run_many/${names[100]}`]);
      expect((await meteredBytes()) - before).toBe(100 * 1000);
    });

    it("records files up to 100 MB in all: one that would pass it is left out, a smaller one after it still fits", async () => {
      heads.set("run_big/a.bin", { bytes: 40 * MB, contentType: "application/octet-stream" });
      heads.set("run_big/b.bin", { bytes: 40 * MB, contentType: "application/octet-stream" });
      heads.set("run_big/c.bin", { bytes: 40 * MB, contentType: "application/octet-stream" });
      heads.set("run_big/d.txt", { bytes: 20 * MB, contentType: "text/plain" });
      const before = await meteredBytes();
      const recorded = await recordWith("run_big", ["a.bin", "b.bin", "c.bin", "d.txt"]);
      expect(recorded).toEqual([
        { name: "a.bin", bytes: 40 * MB, content_type: "application/octet-stream" },
        { name: "b.bin", bytes: 40 * MB, content_type: "application/octet-stream" },
        { name: "d.txt", bytes: 20 * MB, content_type: "text/plain" },
      ]);
      expect((await meteredBytes()) - before).toBe(100 * MB);
      expect(deleted).toEqual(["run_big/c.bin"]);
    });

    it("records the size S3 has, not what the run's answer claims; reported names S3 does not have, and bad names, are left out", async () => {
      heads.set("run_claim/report.pdf", { bytes: 7 * MB, contentType: "application/pdf" });
      const before = await meteredBytes();
      // A tampered runner's answer: a size claim beside a name (ignored: only names are read), a missing object, a path.
      const recorded = await recordWith("run_claim", ["report.pdf", { name: "x.png", bytes: 1 }, "gone.png", "../run_other/secret.txt"]);
      expect(recorded).toEqual([{ name: "report.pdf", bytes: 7 * MB, content_type: "application/pdf" }]);
      expect(headsAsked).toEqual(["run_claim/report.pdf", "run_claim/gone.png"]);
      expect(deleted).toEqual([]);
      expect((await meteredBytes()) - before).toBe(7 * MB);
    });
  });
  it("on S3: HEADs each reported artifact and DELETEs the one over the caps, exactly these calls", async () => {
    const calls: [string, unknown][] = [];
    const sizes: Record<string, number> = { "artifacts/run_s3/a.bin": 60 * 1024 * 1024, "artifacts/run_s3/b.bin": 60 * 1024 * 1024, "artifacts/run_s3/c.txt": 10 };
    const s3 = {
      send: async (command: { constructor: { name: string }; input: { Key: string } }) => {
        calls.push([command.constructor.name, command.input]);
        if (command.constructor.name === "DeleteObjectCommand") return {};
        const bytes = sizes[command.input.Key];
        if (bytes === undefined) throw Object.assign(new Error("NotFound"), { name: "NotFound", $metadata: { httpStatusCode: 404 } });
        return { ContentLength: bytes, ContentType: "application/octet-stream" };
      },
    };
    const secretBox = createKmsSecretBox(new InProcessKms(KEY_ARN, "AROAEXAMPLEEXECUTION").client("recorder"), KEY_ARN, (id) => `AROAEXAMPLEEXECUTION:bfn-${id}`);
    const onS3 = makeRunRecorder({ store: memory.store, clock: { now: () => new Date(ENDED) }, log: (line) => void logs.push(line), outcomes: createS3OutcomeBucket(s3 as unknown as S3Client, "bfn-run-bucket"), secretBox });
    await memory.store.runs.put(runItem(functionItem({ function_id: "fn_s3" }), { run_id: "run_s3", status: "running", queued_at: STARTED, started_at: STARTED }));
    const answer = { status: "succeeded", result_json: "1", logs: "", browser_ms: 0, artifacts: ["a.bin", "b.bin", "missing.png", "c.txt"] };
    expect(await onS3(request("run_s3", { answer }))).toEqual(answered("succeeded"));
    const head = (name: string) => ["HeadObjectCommand", { Bucket: "bfn-run-bucket", Key: `artifacts/run_s3/${name}` }];
    expect(calls).toEqual([head("a.bin"), head("b.bin"), head("missing.png"), head("c.txt"), ["DeleteObjectCommand", { Bucket: "bfn-run-bucket", Key: "artifacts/run_s3/b.bin" }]]);
    expect((await memory.store.artifacts.list("run_s3", new Date(ENDED))).map((a) => a.name)).toEqual(["a.bin", "c.txt"]);
  });

  it("on S3: counts each artifact against its account's storage cap, and DELETEs one past it, exactly these calls", async () => {
    const calls: [string, unknown][] = [];
    const sizes: Record<string, number> = { "artifacts/run_cap/a.bin": 600_000, "artifacts/run_cap/b.bin": 600_000, "artifacts/run_cap/c.txt": 10 };
    const s3 = {
      send: async (command: { constructor: { name: string }; input: { Key: string } }) => {
        calls.push([command.constructor.name, command.input]);
        if (command.constructor.name === "DeleteObjectCommand") return {};
        return { ContentLength: sizes[command.input.Key], ContentType: "application/octet-stream" };
      },
    };
    const secretBox = createKmsSecretBox(new InProcessKms(KEY_ARN, "AROAEXAMPLEEXECUTION").client("recorder"), KEY_ARN, (id) => `AROAEXAMPLEEXECUTION:bfn-${id}`);
    const capOf = async (accountId: string) => (accountId === "capped" ? 1_000_000 : Infinity);
    const onS3 = makeRunRecorder({
      store: memory.store,
      clock: { now: () => new Date(ENDED) },
      log: (line) => void logs.push(line),
      outcomes: createS3OutcomeBucket(s3 as unknown as S3Client, "bfn-run-bucket"),
      secretBox,
      storageCap: capOf,
    });
    await memory.store.runs.put(runItem(functionItem({ function_id: "fn_cap", account_id: "capped" }), { run_id: "run_cap", status: "running", queued_at: STARTED, started_at: STARTED }));
    const answer = { status: "succeeded", result_json: "1", logs: "", browser_ms: 0, artifacts: ["a.bin", "b.bin", "c.txt"] };
    expect(await onS3(request("run_cap", { answer }))).toEqual(answered("succeeded"));
    const head = (name: string) => ["HeadObjectCommand", { Bucket: "bfn-run-bucket", Key: `artifacts/run_cap/${name}` }];
    expect(calls).toEqual([head("a.bin"), head("b.bin"), head("c.txt"), ["DeleteObjectCommand", { Bucket: "bfn-run-bucket", Key: "artifacts/run_cap/b.bin" }]]);
    expect((await memory.store.artifacts.list("run_cap", new Date(ENDED))).map((a) => a.name)).toEqual(["a.bin", "c.txt"]);
    expect(logs).toContain("run recorder: artifact b.bin of run_cap dropped: the account's storage is full (its plan's max_storage_mb)");
    // The two kept files and the run's record: "1", no logs, its params.
    const params = Buffer.byteLength(JSON.stringify(runItem(functionItem(), {}).params));
    expect(await memory.store.storage.held("capped", new Date(ENDED))).toBe(600_010 + 1 + params);
  });
});
