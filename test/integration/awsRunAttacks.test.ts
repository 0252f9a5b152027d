import { MAX_RESULT_BYTES } from "../../lambdas/runner/outputLimits";
import { outcomeKey } from "../../lambdas/runtime/aws/outcomeBucket";
import { newRun } from "../../lambdas/runs/newRun";
import type { RunItem } from "../../lambdas/runs/types";
import { AwsFacade } from "../helpers/awsFacade";
import { RECORDER_ARN, STATE_MACHINE_ARN } from "../helpers/awsPipeline";
import { type AwsRunWorld, runIdOf, startAwsRunWorld } from "../helpers/awsRunWorld";
import type { PolicyStatement } from "../helpers/iamPolicy";
import { ACCOUNT, REGION, StackPolicies, type TemplateJson } from "../helpers/stackPolicies";
import { synthStack } from "../helpers/testStack";

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
    expect(execution).toMatchObject({ status: "SUCCEEDED", trail: [...trailAtDelete, "Invoke", "Record", "Retrying", "Recorded"] });
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
    // It went through the bucket (the workflow carries 256 KB), and the recorder deleted it once the run was recorded.
    expect(world.pipeline.s3.requests).toContain(`POST ${outcomeKey(runId)}`);
    expect(world.pipeline.s3.deletes.some((keys) => keys.includes(outcomeKey(runId)))).toBe(true);
    expect(world.pipeline.s3.objects.has(`bfn-run-bucket/${outcomeKey(runId)}`)).toBe(false);
  }, 60_000);

  it("records a result of exactly the inline cap (MAX_RESULT_BYTES of JSON), and fails one byte more as result_too_large", async () => {
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

// What automation code can do on AWS: its Lambda's environment holds its role's credentials
// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN) and it may call any AWS API
// with fetch. It finds its own run id in the URL artifacts.save answers with.
const ATTACKER = `import { artifacts } from "browserfn/runtime";
export default async (target: { victim: string; recorder: string; runs: string; bucket: string }) => {
  const env = process.env;
  const own = String((await artifacts.save("probe.txt", "x")).url).split("/runs/")[1]?.split("/")[0] ?? "";
  const call = async (name: string, method: string, path: string, body?: string, headers: Record<string, string> = {}) => {
    const response = await fetch(String(env.AWS_ENDPOINT_URL) + path, {
      method,
      body,
      headers: {
        authorization: "AWS4-HMAC-SHA256 Credential=" + env.AWS_ACCESS_KEY_ID + "/20260101/" + env.AWS_REGION + "/svc/aws4_request, SignedHeaders=host, Signature=" + "0".repeat(64),
        "x-amz-security-token": String(env.AWS_SESSION_TOKEN),
        ...headers,
      },
    });
    const text = await response.text();
    return { name, status: response.status, error: response.headers.get("x-amzn-errortype") ?? (/"__type":"(\\w+)"|<Code>(\\w+)</.exec(text)?.slice(1).find(Boolean) ?? null) };
  };
  const forged = (runId: string) => JSON.stringify({
    run_id: runId, timeout_seconds: 300, started_at: new Date(Date.now() - 1000).toISOString(), ended_at: new Date().toISOString(),
    ended: { answer: { status: "succeeded", result_json: JSON.stringify("forged"), logs: "", browser_ms: 0 } },
  });
  const invoke = "/2015-03-31/functions/" + encodeURIComponent(target.recorder) + "/invocations";
  const states = (action: string, body: unknown) => ["POST", "/", JSON.stringify(body), { "x-amz-target": "AWSStepFunctions." + action, "content-type": "application/x-amz-json-1.0" }] as const;
  const execution = (runId: string) => target.runs.replace(":stateMachine:", ":execution:") + ":" + runId;
  const attempts = [
    await call("forge own end", "POST", invoke, forged(own)),
    await call("forge victim end", "POST", invoke, forged(target.victim)),
    await call("start a run execution", ...states("StartExecution", { stateMachineArn: target.runs, name: target.victim + "-again", input: "{}" })),
    await call("stop own execution", ...states("StopExecution", { executionArn: execution(own) })),
    await call("stop victim execution", ...states("StopExecution", { executionArn: execution(target.victim) })),
    await call("put victim outcome", "PUT", "/" + target.bucket + "/outcomes/" + target.victim + ".json", forged(target.victim)),
    await call("read victim artifact", "GET", "/" + target.bucket + "/artifacts/" + target.victim + "/report.csv"),
  ];
  return { own, attempts };
};`;

describe("an automation calling AWS with its Lambda's own credentials", () => {
  // The stack as deployed with the pipeline's names (prefix bfn: bfn-run-recorder, bfn-runs).
  const template = synthStack({ prefix: "bfn" }).toJSON() as TemplateJson;
  const names = new StackPolicies(template);
  const policies = new StackPolicies(template, { [names.logicalId("AWS::S3::Bucket", "RunPipelineRunBucket")]: "bfn-run-bucket" });
  const execution = policies.roleStatements(policies.logicalId("AWS::IAM::Role", "FunctionRuntimeExecutionRole"));
  const target = (victim: string) => ({ victim, recorder: RECORDER_ARN, runs: STATE_MACHINE_ARN, bucket: "bfn-run-bucket" });
  let world: AwsRunWorld;
  let facade: AwsFacade;
  let attackerId = "";
  let victimFunction: Parameters<typeof newRun>[0];

  beforeAll(async () => {
    world = await startAwsRunWorld();
    facade = await new AwsFacade(world.pipeline, policies.resourcePolicyStatements("AWS::S3::BucketPolicy"), ACCOUNT).start();
    attackerId = (await world.create("acme", "attacker", ATTACKER)).function_id;
    victimFunction = await world.create("globex", "victim", SLEEPER);
  }, 60_000);
  afterAll(async () => {
    await world?.close();
    await facade?.close();
  });

  /** The function Lambdas run with `statements` as their role's, and the credentials and endpoint in their environment. */
  function lambdasRunAs(statements: PolicyStatement[]): void {
    world.pipeline.lambda.environment = (name) => ({
      ...facade.credentials({ statements, userid: `AROAEXAMPLEEXECUTION:${name}` }),
      AWS_REGION: REGION,
      AWS_ENDPOINT_URL: facade.endpoint,
    });
  }

  /** Another account's run, running, with an artifact in the bucket. */
  async function victimRun(): Promise<RunItem> {
    const now = new Date().toISOString();
    const run: RunItem = { ...newRun(victimFunction, { version: 1, trigger: "http", params: {}, queuedAt: now }), status: "running", started_at: now };
    await world.pipeline.memory.store.runs.put(run);
    world.pipeline.s3.objects.set(`bfn-run-bucket/artifacts/${run.run_id}/report.csv`, Buffer.from("globex,secret\n"));
    return (await world.run(run.run_id)) as RunItem;
  }

  const recorderCallsFor = (runId: string) =>
    world.pipeline.lambda.sent.filter((c) => (c.input as { FunctionName?: string }).FunctionName === RECORDER_ARN && String((c.input as { Payload?: unknown }).Payload).includes(runId)).length;

  it("is denied every way to speak for a run: the victim's run is untouched, and its own ends with its true outcome, metered once", async () => {
    lambdasRunAs(execution);
    const victim = await victimRun();
    const answer = await world.invoke("acme", "attacker", { target: target(victim.run_id) });
    await world.pipeline.settled();
    const runId = runIdOf(answer);
    const own = await world.run(runId);
    expect(own?.status).toBe("succeeded");
    const told = JSON.parse(own?.result_json ?? "{}") as { own: string; attempts: unknown[] };
    expect(told.own).toBe(runId);
    expect(told.attempts).toEqual([
      { name: "forge own end", status: 403, error: "AccessDeniedException" },
      { name: "forge victim end", status: 403, error: "AccessDeniedException" },
      { name: "start a run execution", status: 400, error: "AccessDeniedException" },
      { name: "stop own execution", status: 400, error: "AccessDeniedException" },
      { name: "stop victim execution", status: 400, error: "AccessDeniedException" },
      { name: "put victim outcome", status: 403, error: "AccessDenied" },
      { name: "read victim artifact", status: 403, error: "AccessDenied" },
    ]);
    // Every call was made as the function's Lambda's session, and none was allowed.
    const session = `AROAEXAMPLEEXECUTION:bfn-${attackerId}`;
    expect(facade.calls.map((call) => [call.userid, call.action, call.effect])).toEqual([
      [session, "lambda:InvokeFunction", "ImplicitDeny"],
      [session, "lambda:InvokeFunction", "ImplicitDeny"],
      [session, "states:StartExecution", "ImplicitDeny"],
      [session, "states:StopExecution", "ImplicitDeny"],
      [session, "states:StopExecution", "ImplicitDeny"],
      [session, "s3:PutObject", "ImplicitDeny"],
      [session, "s3:GetObject", "ImplicitDeny"],
    ]);
    expect(await world.run(victim.run_id)).toEqual(victim);
    expect(world.pipeline.s3.objects.has(`bfn-run-bucket/outcomes/${victim.run_id}.json`)).toBe(false);
    expect([...world.pipeline.stepFunctions.executions.keys()]).toEqual([runId]);
    // Recorded once, by its workflow, with what it really returned; metered once; its slot given back.
    expect(recorderCallsFor(runId)).toBe(1);
    expect(await world.metered(attackerId)).toBe(1);
    expect(await world.inFlight("acme")).toBe(0);
    expect(await world.metered(victimFunction.function_id)).toBe(0);
  }, 60_000);

  it("would end both runs with the old design's grant (lambda:InvokeFunction on the completion Lambda, here the recorder): the stand-ins are not vacuous", async () => {
    facade.calls.length = 0;
    const oldGrant: PolicyStatement = { Effect: "Allow", Action: "lambda:InvokeFunction", Resource: RECORDER_ARN };
    lambdasRunAs([...execution, oldGrant]);
    const victim = await victimRun();
    const answer = await world.invoke("acme", "attacker", { target: target(victim.run_id) });
    await world.pipeline.settled();
    expect(facade.calls.slice(0, 2).map((call) => call.effect)).toEqual(["Allow", "Allow"]);
    // The forged ends were recorded: its own run ended early as "forged" (its true outcome lost), and another account's run too.
    expect(await world.run(runIdOf(answer))).toMatchObject({ status: "succeeded", result_json: JSON.stringify("forged") });
    expect(await world.run(victim.run_id)).toMatchObject({ status: "succeeded", result_json: JSON.stringify("forged"), account_id: "globex" });
  }, 60_000);
});
