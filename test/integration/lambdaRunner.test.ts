import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser } from "puppeteer-core";
import { compileCode } from "../../lambdas/code/compileCode";
import { createLambdaHandler, DEADLINE_MARGIN_MS, type LambdaRunHandler } from "../../lambdas/runner/lambdaHandler";
import { type FunctionMeta, INLINE_ANSWER_BYTES, type LambdaRunAnswer, type LambdaRunEvent, RUNNER_PROTOCOL, type RunUploads } from "../../lambdas/runner/lambdaPackage";
import { launchTestBrowser } from "../helpers/testBrowser";
import { startUploadServer, type UploadServer } from "../helpers/uploadServer";
import { createS3OutcomeBucket } from "../../lambdas/runtime/aws/outcomeBucket";
import { InProcessS3 } from "../helpers/inProcessS3";

/** Upload forms that POST to `url` (an upload server that answers as told, whatever the form). */
const formsTo = (url: string): RunUploads => ({
  url,
  fields: {},
  outcome: { key: "outcomes/run_1/outcome.json", policy: "cG9saWN5", signature: "sig" },
  artifacts: { key_prefix: "outcomes/run_1/artifact-", policy_template: "{}", signatures: [] },
});

/**
 * The Lambda runner's handler in this process, as Lambda's Node runtime calls it (event and
 * context), on a real Chromium; the presigned upload URL is a real HTTP server on 127.0.0.1.
 */

let root: string;
const handlers: LambdaRunHandler[] = [];
const servers: UploadServer[] = [];

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), "browserfn-lambda-runner-"));
});

afterEach(async () => {
  await Promise.all(handlers.splice(0).map((handler) => handler.close()));
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A function's code directory as its zip unpacks (code.cjs, meta.json), served by a handler on the test browser. */
async function handlerFor(source: string, options: { onLeftovers?: (changes: string[]) => void } = {}): Promise<{ handler: LambdaRunHandler; launched: Browser[] }> {
  const compiled = compileCode(source);
  const dir = await mkdtemp(path.join(root, "fn-"));
  const meta: FunctionMeta = { parameter_style: compiled.parameter_style, variables: compiled.variables };
  await writeFile(path.join(dir, "code.cjs"), compiled.js);
  await writeFile(path.join(dir, "meta.json"), JSON.stringify(meta));
  const launched: Browser[] = [];
  const handler = createLambdaHandler(dir, { launchBrowser: async () => launched[launched.push(await launchTestBrowser()) - 1]!, ...options });
  handlers.push(handler);
  return { handler, launched };
}

/** Lambda's context for an invocation with `ms` left before Lambda's timeout. */
function contextWith(ms: number) {
  const end = Date.now() + ms;
  return { getRemainingTimeInMillis: () => end - Date.now() };
}

const event = (params: Record<string, unknown>, fields: Partial<LambdaRunEvent> = {}): LambdaRunEvent => ({
  run_id: "run_1",
  params,
  timeout_ms: 20_000,
  ...fields,
});

const answerBytes = (answer: LambdaRunAnswer): number => Buffer.byteLength(JSON.stringify(answer), "utf8");

const HANGS = `import { Session } from "browserfn/runtime";
export default async function run(hang: boolean) {
  await using session = await Session.start();
  const page = await session.newPage();
  await page.setContent("<title>Still here</title>");
  console.log("before the hang:", await page.title());
  if (hang) await new Promise(() => undefined);
  return await page.title();
}`;

describe("the Lambda runner's deadline", () => {
  it("stops a run Lambda would kill, answers function_timeout with its logs, and serves the next run on a new browser", async () => {
    const { handler, launched } = await handlerFor(HANGS);
    const started = Date.now();
    // Lambda leaves 7 s: the run is stopped at 7 s - DEADLINE_MARGIN_MS (3 s; time for a browser to start on a
    // loaded machine), well before its 20 s timeout.
    const answer = await handler(event({ hang: true }), contextWith(7000));
    const took = Date.now() - started;
    expect(DEADLINE_MARGIN_MS).toBe(3000);
    expect(answer).toStrictEqual({
      status: "failed",
      error: { code: "function_timeout", message: "The function did not finish within its timeout of 20 s" },
      logs: "LOG before the hang: Still here\n",
      browser_ms: expect.any(Number),
      peak_memory_mb: expect.any(Number),
      runner_protocol: RUNNER_PROTOCOL,
    });
    expect(took).toBeGreaterThanOrEqual(4000);
    expect(took).toBeLessThan(7000);
    const { browser_ms } = answer as { browser_ms: number };
    expect(browser_ms).toBeGreaterThan(0);
    expect(browser_ms).toBeLessThanOrEqual(took);

    const next = await handler(event({ hang: false }), contextWith(30_000));
    expect(next).toStrictEqual({
      status: "succeeded",
      result_json: '"Still here"',
      logs: "LOG before the hang: Still here\n",
      browser_ms: expect.any(Number),
      peak_memory_mb: expect.any(Number),
      runner_protocol: RUNNER_PROTOCOL,
    });
    // The abandoned run's browser was closed before the next run: its code holds nothing of the new one.
    expect(launched).toHaveLength(2);
    expect(launched[0]?.connected).toBe(false);
    expect(launched[1]?.browserContexts()).toHaveLength(1);
  }, 60_000);

  it("stops a run at the function's timeout (timeout_ms) when Lambda leaves more", async () => {
    const { handler } = await handlerFor(`export default async () => { console.log("waiting"); await new Promise(() => undefined); };`);
    const started = Date.now();
    const answer = await handler(event({}, { timeout_ms: 1500 }), contextWith(60_000));
    expect(Date.now() - started).toBeGreaterThanOrEqual(1500);
    expect(answer).toStrictEqual({
      status: "failed",
      error: { code: "function_timeout", message: "The function did not finish within its timeout of 1.5 s" },
      logs: "LOG waiting\n",
      browser_ms: 0,
      peak_memory_mb: expect.any(Number),
      runner_protocol: RUNNER_PROTOCOL,
    });
  }, 30_000);
});

/** Leaves the realm as it found it, or not: a patched builtin and a new global, or an unref'd timer. */
const LEAVES = `export default async function run(leave: string) {
  if (leave === "builtins") {
    const stringify = JSON.stringify;
    (JSON as any).stringify = (...args: any[]) => (stringify as any)(...args);
    (Array.prototype as any).leftoverProbe = "an earlier run's";
    (globalThis as any).leftoverStash = { seen: [] };
  }
  if (leave === "timer") setTimeout(() => undefined, 60_000).unref();
  return leave;
}`;

describe("the Lambda runner's realm between invocations (issue #26)", () => {
  const stringify = JSON.stringify;
  afterEach(() => {
    JSON.stringify = stringify;
    delete (Array.prototype as unknown as Record<string, unknown>).leftoverProbe;
    delete (globalThis as unknown as Record<string, unknown>).leftoverStash;
  });

  it("retires the container after a run that patched builtins or added a global, and serves no later run", async () => {
    const retired: string[][] = [];
    const { handler } = await handlerFor(LEAVES, { onLeftovers: (changes) => retired.push(changes) });
    expect(await handler(event({ leave: "nothing" }), contextWith(30_000))).toMatchObject({ status: "succeeded", result_json: '"nothing"' });
    expect(await handler(event({ leave: "nothing" }), contextWith(30_000))).toMatchObject({ status: "succeeded" });
    expect(retired).toEqual([]);
    // The poisoned run itself gets its answer.
    expect(await handler(event({ leave: "builtins" }), contextWith(30_000))).toMatchObject({ status: "succeeded", result_json: '"builtins"' });
    await handler.close(); // its settling (when the realm is compared) is over
    expect(retired).toHaveLength(1);
    expect(retired[0]).toEqual(expect.arrayContaining(["JSON.stringify replaced", "Array.prototype.leftoverProbe added", "globalThis.leftoverStash added"]));
    await expect(handler(event({ leave: "nothing" }), contextWith(30_000))).rejects.toThrow(/serves no more runs: an earlier run left its realm changed \(/);
    expect(retired).toHaveLength(1);
  }, 60_000);

  it("retires the container after a run that left a timer pending, unref'd too", async () => {
    const retired: string[][] = [];
    const { handler } = await handlerFor(LEAVES, { onLeftovers: (changes) => retired.push(changes) });
    expect(await handler(event({ leave: "timer" }), contextWith(30_000))).toMatchObject({ status: "succeeded", result_json: '"timer"' });
    await handler.close();
    expect(retired).toEqual([["1 timer of the automation pending"]]);
    await expect(handler(event({ leave: "nothing" }), contextWith(30_000))).rejects.toThrow(/serves no more runs/);
  }, 60_000);
});

const BIG = `export default async (chars: number) => { console.log("made", chars); return "x".repeat(chars); };`;
const MB = 1024 * 1024;

describe("the Lambda runner's answer over INLINE_ANSWER_BYTES", () => {
  it("uploads a 1 MB result's outcome through the event's outcome form and answers the marker", async () => {
    const { handler, launched } = await handlerFor(BIG);
    const s3 = await new InProcessS3().start();
    try {
      const uploads = await createS3OutcomeBucket(s3.client(), "bfn-run-bucket").uploads("run_1", 60);
      const answer = await handler(event({ chars: MB }, { uploads }), contextWith(30_000));
      const stored = s3.objects.get("bfn-run-bucket/outcomes/run_1/outcome.json")?.toString("utf8") ?? "";
      expect(s3.types.get("bfn-run-bucket/outcomes/run_1/outcome.json")).toBe("application/json");
      expect(JSON.parse(stored)).toStrictEqual({
        status: "succeeded",
        result_json: JSON.stringify("x".repeat(MB)),
        logs: `LOG made ${MB}\n`,
        browser_ms: 0,
        peak_memory_mb: expect.any(Number),
        artifacts: [],
      });
      expect(answer).toStrictEqual({ outcome_uploaded: true, bytes: Buffer.byteLength(stored), runner_protocol: RUNNER_PROTOCOL });
      expect(launched).toHaveLength(0); // browserless code never launches one
    } finally {
      await s3.close();
    }
  });

  it.each([
    ["there are no upload forms", undefined, /the run's event has no uploads$/],
    ["the upload answers 500", 500, /the upload answered HTTP 500/],
  ])("answers a small result_too_large failure with the logs when %s", async (_case, status, reason) => {
    const { handler } = await handlerFor(BIG);
    let url: string | undefined;
    if (status !== undefined) {
      const upload = await startUploadServer(status);
      servers.push(upload);
      url = upload.url;
    }
    const answer = await handler(event({ chars: MB }, url === undefined ? {} : { uploads: formsTo(url) }), contextWith(30_000));
    expect(answer).toStrictEqual({
      status: "failed",
      error: { code: "result_too_large", message: expect.stringMatching(reason) },
      logs: `LOG made ${MB}\n`,
      browser_ms: 0,
      peak_memory_mb: expect.any(Number),
      runner_protocol: RUNNER_PROTOCOL,
    });
    expect(answer).toMatchObject({ error: { message: expect.stringMatching(/^The run's outcome is 1\.0 MB of JSON, over the 200 KB /) } });
    expect(answerBytes(answer)).toBeLessThanOrEqual(INLINE_ANSWER_BYTES);
  });

  it("answers an outcome that fits as it is, with no upload", async () => {
    const { handler } = await handlerFor(BIG);
    const upload = await startUploadServer(200);
    servers.push(upload);
    const answer = await handler(event({ chars: 1000 }, { uploads: formsTo(upload.url) }));
    expect(answer).toMatchObject({ status: "succeeded", result_json: JSON.stringify("x".repeat(1000)) });
    expect(upload.received).toEqual([]);
  });
});
