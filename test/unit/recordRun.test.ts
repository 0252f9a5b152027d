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
  /** What S3's HEAD says of `<run_id>/<slot>` (absent: no such object); every HEAD asked, in order. */
  const heads = new Map<string, { bytes: number; contentType: string | null }>();
  const headsAsked: string[] = [];
  /** Slots copied to their names (`<run_id>/<slot>=<name>`), and runs whose uploads were swept. */
  const kept: string[] = [];
  const swept: string[] = [];
  const outcomes: OutcomeBucket = {
    uploads: async () => Promise.reject(new Error("the recorder signed uploads")),
    slotHead: async (runId, slot) => {
      headsAsked.push(`${runId}/${slot}`);
      return heads.get(`${runId}/${slot}`) ?? null;
    },
    keepArtifact: async (runId, slot, name) => void kept.push(`${runId}/${slot}=${name}`),
    sweepUploads: async (runId) => void swept.push(runId),
    artifactDownloadUrl: async () => "unused",
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

  it("reads the answers of runner protocols 1 (none named) and 2 only: any other ends the run function_crashed, unread", async () => {
    const answer = (protocol: unknown) => ({ status: "succeeded", result_json: "[1]", logs: "", browser_ms: 0, ...(protocol === undefined ? {} : { runner_protocol: protocol }) });
    for (const [runId, protocol] of [["run_p1", undefined], ["run_p2", 2]] as const) {
      await running(runId);
      expect(await recorder(request(runId, { answer: answer(protocol) }))).toEqual(answered("succeeded"));
    }
    for (const [runId, protocol, named] of [["run_p3", 3, "runner protocol 3"], ["run_p0", 0, "runner protocol 0"], ["run_px", "2", "an unreadable runner protocol"], ["run_pf", 2.5, "an unreadable runner protocol"]] as const) {
      await running(runId);
      expect(await recorder(request(runId, { answer: answer(protocol) }))).toEqual(answered("failed"));
      expect(await memory.store.runs.get(runId)).toMatchObject({
        result_json: null,
        error: { code: "function_crashed", message: `The function's runner speaks ${named}; this service reads protocols 1 and 2 only. The stack's runner rollout moves each function's live version to the current runner; redeploy the function to run this version on it` },
      });
    }
    // An uploaded outcome's marker names its protocol too: an unknown one is not read from S3.
    await running("run_pu");
    uploads.set("run_pu", JSON.stringify(answer(2)));
    expect(await recorder(request("run_pu", { answer: { outcome_uploaded: true, bytes: 10, runner_protocol: 9 } }))).toEqual(answered("failed"));
    expect(await memory.store.runs.get("run_pu")).toMatchObject({ error: { code: "function_crashed", message: expect.stringMatching(/^The function's runner speaks runner protocol 9;/) } });
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
    expect((await memory.store.meters.functionCounters("fn_own")).invocations).toBe(13);
  });
  describe("the artifacts a run reports: recorded as S3 has them, at most 100 files and 100 MB", () => {
    const MB = 1024 * 1024;
    const artFn = functionItem({ function_id: "fn_art", account_id: "acct" });
    const succeeded = (artifacts: unknown) => ({ answer: { status: "succeeded", result_json: "1", logs: "", browser_ms: 0, artifacts } });
    async function recordWith(runId: string, artifacts: unknown) {
      await memory.store.runs.put(runItem(artFn, { run_id: runId, status: "running", queued_at: STARTED, started_at: STARTED }));
      headsAsked.length = 0;
      kept.length = 0;
      expect(await recorder(request(runId, succeeded(artifacts)))).toEqual(answered("succeeded"));
      const recorded = await memory.store.artifacts.list(runId, new Date(ENDED));
      return recorded.map(({ name, bytes, content_type }) => ({ name, bytes, content_type }));
    }
    const meteredBytes = async () => (await memory.store.meters.functionCounters("fn_art")).artifact_bytes;

    it("records at most 100 of 101 files reported, asks S3 of those 100 slots only, and sweeps the run's uploads after", async () => {
      const names = Array.from({ length: 101 }, (_, i) => `shot-${String(i).padStart(3, "0")}.png`);
      names.forEach((_, slot) => heads.set(`run_many/${slot}`, { bytes: 1000, contentType: "image/png" }));
      const before = await meteredBytes();
      const recorded = await recordWith("run_many", names);
      expect(recorded.map((a) => a.name)).toEqual(names.slice(0, 100));
      expect(headsAsked).toEqual(names.slice(0, 100).map((_, slot) => `run_many/${slot}`));
      expect(kept).toEqual(names.slice(0, 100).map((name, slot) => `run_many/${slot}=${name}`));
      expect(swept.at(-1)).toBe("run_many");
      expect((await meteredBytes()) - before).toBe(100 * 1000);
    });

    it("records files up to 100 MB in all: one that would pass it is left out, a smaller one after it still fits", async () => {
      heads.set("run_big/0", { bytes: 40 * MB, contentType: "application/octet-stream" });
      heads.set("run_big/1", { bytes: 40 * MB, contentType: "application/octet-stream" });
      heads.set("run_big/2", { bytes: 40 * MB, contentType: "application/octet-stream" });
      heads.set("run_big/3", { bytes: 20 * MB, contentType: "text/plain" });
      const before = await meteredBytes();
      const recorded = await recordWith("run_big", ["a.bin", "b.bin", "c.bin", "d.txt"]);
      expect(recorded).toEqual([
        { name: "a.bin", bytes: 40 * MB, content_type: "application/octet-stream" },
        { name: "b.bin", bytes: 40 * MB, content_type: "application/octet-stream" },
        { name: "d.txt", bytes: 20 * MB, content_type: "text/plain" },
      ]);
      expect((await meteredBytes()) - before).toBe(100 * MB);
      expect(kept).toEqual(["run_big/0=a.bin", "run_big/1=b.bin", "run_big/3=d.txt"]);
    });

    it("records the size S3 has, not what the run's answer claims; reported names S3 does not have, and bad names, are left out", async () => {
      heads.set("run_claim/0", { bytes: 7 * MB, contentType: "application/pdf" });
      heads.set("run_claim/1", { bytes: 1, contentType: "image/png" });
      heads.set("run_claim/4", { bytes: 1, contentType: "text/plain" });
      const before = await meteredBytes();
      // A tampered runner's answer: a size claim beside a name (ignored: only names are read), a missing object, a path.
      // A second slot reporting a name again is dropped (slot 4: its object is swept, not kept).
      const recorded = await recordWith("run_claim", ["report.pdf", { name: "x.png", bytes: 1 }, "gone.png", "../run_other/secret.txt", "report.pdf"]);
      expect(recorded).toEqual([{ name: "report.pdf", bytes: 7 * MB, content_type: "application/pdf" }]);
      expect(headsAsked).toEqual(["run_claim/0", "run_claim/2"]);
      expect(kept).toEqual(["run_claim/0=report.pdf"]);
      expect((await meteredBytes()) - before).toBe(7 * MB);
    });
  });
  it("on S3: HEADs each reported slot, copies the kept ones to their names, then deletes every upload of the run in one call, exactly these calls", async () => {
    const calls: [string, unknown][] = [];
    const sizes: Record<string, number> = { "outcomes/run_s3/artifact-0": 60 * 1024 * 1024, "outcomes/run_s3/artifact-1": 60 * 1024 * 1024, "outcomes/run_s3/artifact-3": 10 };
    const s3 = {
      send: async (command: { constructor: { name: string }; input: { Key: string } }) => {
        calls.push([command.constructor.name, command.input]);
        if (command.constructor.name === "CopyObjectCommand" || command.constructor.name === "DeleteObjectsCommand") return {};
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
    const head = (slot: number) => ["HeadObjectCommand", { Bucket: "bfn-run-bucket", Key: `outcomes/run_s3/artifact-${slot}` }];
    const copy = (slot: number, name: string) => ["CopyObjectCommand", { Bucket: "bfn-run-bucket", Key: `artifacts/run_s3/${name}`, CopySource: `bfn-run-bucket/outcomes/run_s3/artifact-${slot}` }];
    const everyUpload = ["outcomes/run_s3/outcome.json", ...Array.from({ length: 100 }, (_, slot) => `outcomes/run_s3/artifact-${slot}`)];
    const sweep = ["DeleteObjectsCommand", { Bucket: "bfn-run-bucket", Delete: { Objects: everyUpload.map((Key) => ({ Key })), Quiet: true } }];
    expect(calls).toEqual([head(0), copy(0, "a.bin"), head(1), head(2), head(3), copy(3, "c.txt"), sweep]);
    expect((await memory.store.artifacts.list("run_s3", new Date(ENDED))).map((a) => a.name)).toEqual(["a.bin", "c.txt"]);
  });

  it("on S3: counts each artifact against its account's storage cap, and keeps none past it, exactly these calls", async () => {
    const calls: [string, unknown][] = [];
    const sizes: Record<string, number> = { "outcomes/run_cap/artifact-0": 600_000, "outcomes/run_cap/artifact-1": 600_000, "outcomes/run_cap/artifact-2": 10 };
    const s3 = {
      send: async (command: { constructor: { name: string }; input: { Key: string } }) => {
        calls.push([command.constructor.name, command.input]);
        if (command.constructor.name === "CopyObjectCommand" || command.constructor.name === "DeleteObjectsCommand") return {};
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
    const head = (slot: number) => ["HeadObjectCommand", { Bucket: "bfn-run-bucket", Key: `outcomes/run_cap/artifact-${slot}` }];
    const copy = (slot: number, name: string) => ["CopyObjectCommand", { Bucket: "bfn-run-bucket", Key: `artifacts/run_cap/${name}`, CopySource: `bfn-run-bucket/outcomes/run_cap/artifact-${slot}` }];
    expect(calls.slice(0, -1)).toEqual([head(0), copy(0, "a.bin"), head(1), head(2), copy(2, "c.txt")]);
    expect(calls.at(-1)?.[0]).toBe("DeleteObjectsCommand");
    expect((await memory.store.artifacts.list("run_cap", new Date(ENDED))).map((a) => a.name)).toEqual(["a.bin", "c.txt"]);
    expect(logs).toContain("run recorder: artifact b.bin of run_cap dropped: the account's storage is full (its plan's max_storage_mb)");
    // The two kept files and the run's record: "1", no logs, its params.
    const params = Buffer.byteLength(JSON.stringify(runItem(functionItem(), {}).params));
    expect(await memory.store.storage.held("capped", new Date(ENDED))).toBe(600_010 + 1 + params);
  });
});
