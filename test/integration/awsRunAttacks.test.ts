import { MAX_RESULT_BYTES } from "../../lambdas/runner/outputLimits";
import { outcomeKey } from "../../lambdas/runtime/aws/outcomeBucket";
import { type AwsRunWorld, runIdOf, startAwsRunWorld } from "../helpers/awsRunWorld";

// The AWS run pipeline (test/helpers/awsPipeline.ts: the real workflow definition, runner,
// recorder and sweeper behind in-process stand-ins of AWS) against what really happens on AWS:
// Lambda's throttles racing a delete, outcomes at the size limits, and automation code that
// calls AWS itself with its Lambda's credentials.

const SLEEPER = "export default async (ms: number) => { await new Promise((resolve) => setTimeout(resolve, ms)); return { slept: ms }; };";
const BIG = "export default async (n: number) => \"x\".repeat(n);";
// A screenshot that does not compress: a canvas of random pixels, 640 × 400, as a base64 PNG (about 1 MB).
const SCREENSHOT = `import { Session } from "browserfn/runtime";
export default async () => {
  await using session = await Session.start();
  const page = await session.newPage();
  await page.setViewport({ width: 640, height: 400 });
  await page.setContent('<body style="margin:0"><canvas id="c" width="640" height="400"></canvas></body>');
  await page.evaluate(() => {
    const canvas = document.getElementById("c") as HTMLCanvasElement;
    const context = canvas.getContext("2d") as CanvasRenderingContext2D;
    const image = context.createImageData(640, 400);
    for (let i = 0; i < image.data.length; i++) image.data[i] = i % 4 === 3 ? 255 : Math.floor(Math.random() * 256);
    context.putImageData(image, 0, 0);
  });
  return { png: await page.screenshot({ encoding: "base64" }) };
};`;

async function until<T>(find: () => T | undefined, what: string, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > end) throw new Error(`never: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe("a function deleted while its run waits out Lambda's throttle", () => {
  let world: AwsRunWorld;
  // WaitThrottle's 5 s take 500 ms: time to delete the function's Lambda during it.
  beforeEach(async () => void (world = await startAwsRunWorld({ timeScale: 0.1 })), 30_000);
  afterEach(async () => await world?.close());

  it("ends the run failed / function_crashed (not deployed) within its deadline, metered once, its lease given back", async () => {
    const fn = await world.create("acme", "doomed", SLEEPER);
    let invokes = 0;
    // The stand-in refuses the first Invoke as Lambda does over its concurrency (TooManyRequestsException).
    world.pipeline.lambda.throttle = () => invokes++ === 0;
    const invoking = world.invoke("acme", "doomed", { ms: 1 });
    const executions = world.pipeline.stepFunctions.executions;
    const execution = await until(() => [...executions.values()].find((e) => e.trail.at(-1) === "WaitThrottle"), "the run waits out a throttle");
    await world.pipeline.runtime.remove(fn); // the delete route's work on AWS: the function's Lambda is gone
    const trailAtDelete = [...execution.trail];
    const answer = await invoking;
    await world.pipeline.settled();

    expect(trailAtDelete).toEqual(["Invoke", "Throttled", "CountThrottle", "WaitThrottle"]);
    // The retried Invoke meets the deleted Lambda (ResourceNotFoundException), and the recorder ends the run.
    expect(execution).toMatchObject({ status: "SUCCEEDED", trail: [...trailAtDelete, "Invoke", "Record"] });
    expect(invokes).toBe(2);
    const run = await world.run(runIdOf(answer));
    expect(run).toMatchObject({ status: "failed", error: { code: "function_crashed", message: expect.stringMatching(/not deployed/) }, duration_ms: 0 });
    expect(Date.parse(run?.finished_at ?? "")).toBeLessThanOrEqual(Date.parse(run?.deadline_at ?? ""));
    expect(await world.metered(fn.function_id)).toBe(1);
    expect(await world.inFlight("acme")).toBe(0);
    // Nothing is left for the sweeper: no run stays running.
    expect(await world.pipeline.sweeper({ "detail-type": "Scheduled Event" })).toEqual({ settled: 0 });
  }, 30_000);
});

describe("outcomes at the size limits on AWS", () => {
  let world: AwsRunWorld;
  beforeAll(async () => {
    world = await startAwsRunWorld();
    await world.create("acme", "big", BIG);
    await world.create("acme", "screenshot", SCREENSHOT);
  }, 60_000);
  afterAll(async () => await world?.close());

  it("records a 1 MB base64 screenshot whole, through the run's outcome upload", async () => {
    const answer = await world.invoke("acme", "screenshot", {});
    await world.pipeline.settled();
    const runId = runIdOf(answer);
    const run = await world.run(runId);
    expect(run?.status).toBe("succeeded");
    const png = Buffer.from((JSON.parse(run?.result_json ?? "{}") as { png: string }).png, "base64");
    expect(run?.result_json?.length).toBeGreaterThan(1_000_000);
    // A whole PNG of the page: its signature, and its header's 640 × 400.
    expect(png.subarray(0, 8).toString("hex")).toBe("89504e470d0a1a0a");
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([640, 400]);
    expect(png.subarray(-8, -4).toString("latin1")).toBe("IEND");
    // It went through the bucket (the workflow carries 256 KB), and is the uploaded object byte for byte.
    const uploaded = world.pipeline.s3.objects.get(`bfn-run-bucket/${outcomeKey(runId)}`);
    expect(JSON.parse(uploaded?.toString("utf8") ?? "{}")).toMatchObject({ status: "succeeded", result_json: run?.result_json });
  }, 60_000);

  it("records a result of exactly 6 MB of JSON, and fails one byte more as result_too_large", async () => {
    const atLimit = await world.invoke("acme", "big", { n: MAX_RESULT_BYTES - 2 }); // two quotes
    await world.pipeline.settled();
    const kept = await world.run(runIdOf(atLimit));
    expect(kept?.status).toBe("succeeded");
    expect(Buffer.byteLength(kept?.result_json ?? "")).toBe(MAX_RESULT_BYTES);
    expect(kept?.result_json).toBe(JSON.stringify("x".repeat(MAX_RESULT_BYTES - 2)));

    const over = await world.invoke("acme", "big", { n: MAX_RESULT_BYTES - 1 });
    await world.pipeline.settled();
    expect(await world.run(runIdOf(over))).toMatchObject({ status: "failed", result_json: null, error: { code: "result_too_large" } });
    expect(await world.inFlight("acme")).toBe(0);
  }, 90_000);
});
