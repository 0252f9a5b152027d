import { InvokeCommand } from "@aws-sdk/client-lambda";
import type { StartExecutionCommand } from "@aws-sdk/client-sfn";
import { createAwsRuntime, type StepFunctionsLike } from "../../lambdas/runtime/aws/awsRuntime";
import type { OutcomeBucket } from "../../lambdas/runtime/aws/outcomeBucket";
import { makeRunRecorder } from "../../lambdas/runtime/aws/recordRun";
import { runWorkflowDefinition, WORKFLOW_SUBSTITUTIONS } from "../../lambdas/runtime/aws/runWorkflow";
import { createKmsSecretBox } from "../../lambdas/secrets/kmsSecretBox";
import { InProcessKms } from "../helpers/inProcessKms";
import { InProcessStepFunctions } from "../helpers/inProcessStepFunctions";
import { type MemoryStore, startMemoryStore } from "../helpers/memoryStore";
import { functionItem, runItem } from "../helpers/records";

// The run workflow with the Lambdas' answers as real Lambda gives them when it stops a function
// (timeout, out of memory, exit), through the stand-in of Step Functions (raising what Step
// Functions raises for them) into the real recorder: what the run's record says.

const RECORDER_ARN = "arn:aws:lambda:eu-west-1:123456789012:function:bfn-run-recorder";
const STATE_MACHINE_ARN = "arn:aws:states:eu-west-1:123456789012:stateMachine:bfn-runs";
const KEY_ARN = "arn:aws:kms:eu-west-1:123456789012:key/k";
const fn = functionItem({ function_id: "fn_01jabcdefghjkmnpqrstvwxyz0", account_id: "acct", timeout_seconds: 60, memory_mb: 2048, latest_version: 1 });
const FUNCTION = `bfn-${fn.function_id}:v1`;
/** Step Functions' cause of a Lambda.Unknown (docs: bp-lambda-serviceexception; the cause as seen in cdklabs/construct-hub#713). */
const UNKNOWN = "The cause could not be determined because Lambda did not return an error type. Returned payload: ";

type Answer = { FunctionError?: string; payload: unknown; /** Lambda's API fails the first invokes with these errors (by name). */ serviceErrors?: string[] };

describe("the run workflow when Lambda stops the function", () => {
  let memory: MemoryStore;
  let recorder: ReturnType<typeof makeRunRecorder>;
  const recorded: unknown[] = [];
  const answers = new Map<string, Answer>();
  /** Invokes of the function's Lambda per run (those Lambda's API failed included). */
  const invokes = new Map<string, number>();
  const outcomes: OutcomeBucket = {
    uploads: async (runId) => ({ url: "https://bucket.example/", fields: {}, outcome: { key: `outcomes/${runId}/outcome.json`, policy: "p", signature: "s" }, artifacts: { key_prefix: `outcomes/${runId}/artifact-`, policy_template: "{}", signatures: [] } }),
    slotHead: async () => null,
    keepArtifact: async () => undefined,
    sweepUploads: async () => undefined,
    artifactDownloadUrl: async () => "unused",
    read: async () => null,
  };
  /** Lambda's Invoke API: the function answers as scripted per run; the recorder is the real one. */
  const lambda = {
    async send(command: InvokeCommand) {
      const payload = JSON.parse(String(command.input.Payload)) as { run_id: string; ended?: unknown };
      if (command.input.FunctionName === RECORDER_ARN) {
        recorded.push(payload.ended);
        return { StatusCode: 200, Payload: new TextEncoder().encode(JSON.stringify(await recorder(payload))) };
      }
      expect(command.input.FunctionName).toBe(FUNCTION);
      const answer = answers.get(payload.run_id);
      if (!answer) throw new Error(`no answer for ${payload.run_id}`);
      invokes.set(payload.run_id, (invokes.get(payload.run_id) ?? 0) + 1);
      const serviceError = answer.serviceErrors?.shift();
      if (serviceError) throw Object.assign(new Error(`${serviceError}: the Lambda service failed`), { name: serviceError });
      return { StatusCode: 200, ...(answer.FunctionError ? { FunctionError: answer.FunctionError } : {}), Payload: new TextEncoder().encode(JSON.stringify(answer.payload)) };
    },
  };
  const definition = JSON.stringify(runWorkflowDefinition())
    .replaceAll(`\${${WORKFLOW_SUBSTITUTIONS.recorderArn}}`, RECORDER_ARN)
    .replaceAll(`\${${WORKFLOW_SUBSTITUTIONS.deadLetterUrl}}`, "https://sqs.example/dlq");
  let stepFunctions: InProcessStepFunctions;

  beforeAll(async () => {
    memory = await startMemoryStore();
    const secretBox = createKmsSecretBox(new InProcessKms(KEY_ARN, "AROAEXAMPLEEXECUTION").client("recorder"), KEY_ARN, (id) => `AROAEXAMPLEEXECUTION:bfn-${id}`);
    recorder = makeRunRecorder({ store: memory.store, clock: { now: () => new Date() }, log: () => undefined, outcomes, secretBox });
    stepFunctions = new InProcessStepFunctions(definition, lambda, { stateMachineArn: STATE_MACHINE_ARN, timeScale: 0.001 });
  });
  afterAll(() => memory?.close());

  function runtimeWith(stepFunctionsApi: StepFunctionsLike) {
    return createAwsRuntime({
      lambda: { send: async () => Promise.reject(new Error("no control plane here")) }, stepFunctions: stepFunctionsApi, stateMachineArn: STATE_MACHINE_ARN, outcomes,
      runs: memory.store.runs, functionPrefix: "bfn-", executionRoleArn: "role", executionRoleId: "AROAEXAMPLEEXECUTION", layerArns: [], logGroup: "/g", runPollIntervalMs: 5,
    });
  }

  async function run(runId: string, answer: Answer) {
    answers.set(runId, answer);
    await memory.store.runs.put(runItem(fn, { run_id: runId, version: 1, status: "running", started_at: new Date().toISOString() }));
    const hooks = { onQueued: async () => undefined, onRunning: async () => undefined };
    const result = await runtimeWith(stepFunctions).invoke({ fn, version: 1, runId, params: {}, waitMs: 0, artifactsUrl: "https://api.example/" }, hooks);
    return { result, ended: recorded.at(-1) };
  }

  it("a timeout Lambda answers without an error type: Lambda.Unknown, with Step Functions' sentence before the payload → timed_out", async () => {
    const payload = { errorMessage: "2022-01-13T00:58:08.879Z 28931c40-79b9-45eb-8e62-5a126760693b Task timed out after 60.06 seconds" };
    const { result, ended } = await run("run_timeout", { FunctionError: "Unhandled", payload });
    expect(ended).toEqual({ Error: "Lambda.Unknown", Cause: `${UNKNOWN}${JSON.stringify(payload)}` });
    expect(result).toMatchObject({ status: "timed_out", error: { code: "function_timeout", message: "The function did not finish within its timeout of 60 s" } });
    expect(await memory.store.runs.get("run_timeout")).toMatchObject({ status: "timed_out", error: { code: "function_timeout" } });
  });

  it("an out-of-memory exit without an error type (Process exited before completing request) → crashed, naming the memory limit", async () => {
    const payload = { errorMessage: "RequestId: 16f8d3a2-26fc-11e8-bca6-73dbc61c39e7 Process exited before completing request" };
    const { result, ended } = await run("run_oom_old", { FunctionError: "Unhandled", payload });
    expect(ended).toEqual({ Error: "Lambda.Unknown", Cause: `${UNKNOWN}${JSON.stringify(payload)}` });
    expect(result).toMatchObject({ status: "failed", error: { code: "function_crashed", message: expect.stringContaining("ran out of memory: its limit is 2048 MB") } });
  });

  it.each([
    ["Sandbox.Timedout", "RequestId: r Error: Task timed out after 60.00 seconds", "timed_out", "function_timeout", "within its timeout of 60 s"],
    ["Runtime.OutOfMemory", "RequestId: r Error: Runtime exited with error: signal: killed", "failed", "function_crashed", "its limit is 2048 MB"],
    ["Runtime.ExitError", "RequestId: r Error: Runtime exited with error: exit status 1", "failed", "function_crashed", "Runtime.ExitError: RequestId: r Error: Runtime exited with error: exit status 1"],
    ["Error", "the runner threw", "failed", "function_crashed", "Error: the runner threw"],
  ])("an answer naming its error type (%s) is raised under that name, the payload its cause", async (errorType, errorMessage, status, code, message) => {
    const runId = `run_${errorType.replace(".", "_").toLowerCase()}`;
    const payload = { errorType, errorMessage };
    const { result, ended } = await run(runId, { FunctionError: "Unhandled", payload });
    expect(ended).toEqual({ Error: errorType, Cause: JSON.stringify(payload) });
    expect(result).toMatchObject({ status, error: { code, message: expect.stringContaining(message) } });
  });

  it.each(["ServiceException", "AWSLambdaException", "SdkClientException"])("a Lambda service failure (Lambda.%s) is tried again, as AWS's guidance says: the run ends with the function's answer", async (name) => {
    const runId = `run_service_${name.toLowerCase()}`;
    const { result } = await run(runId, { payload: { status: "succeeded", result_json: "42", logs: "", browser_ms: 0 }, serviceErrors: [name, name] });
    expect(invokes.get(runId)).toBe(3);
    expect(result).toMatchObject({ status: "succeeded", result_json: "42" });
    expect(stepFunctions.executions.get(runId)?.trail.filter((state) => state === "Invoke")).toHaveLength(3);
  });

  it("a function's own error named like a Lambda service failure is not tried again (its cause is its JSON payload)", async () => {
    const payload = { errorType: "Lambda.ServiceException", errorMessage: "user code chose this name" };
    const { result, ended } = await run("run_fake_service_error", { FunctionError: "Unhandled", payload });
    expect(invokes.get("run_fake_service_error")).toBe(1);
    expect(ended).toEqual({ Error: "Lambda.ServiceException", Cause: JSON.stringify(payload) });
    expect(result).toMatchObject({ status: "failed", error: { code: "function_crashed" } });
  });

  it("a start retried after its execution closed gets ExecutionAlreadyExists (400), and the run is waited for as started", async () => {
    const sent: string[] = [];
    /** The first attempt went through, its answer was lost; the SDK tries again once the execution closed. */
    const retrying: StepFunctionsLike = {
      async send(command: StartExecutionCommand) {
        sent.push(command.input.name ?? "");
        await stepFunctions.send(command);
        await stepFunctions.settled();
        sent.push(command.input.name ?? "");
        return stepFunctions.send(command);
      },
    };
    answers.set("run_twice", { payload: { status: "succeeded", result_json: "7", logs: "", browser_ms: 0 } });
    await memory.store.runs.put(runItem(fn, { run_id: "run_twice", version: 1, status: "running", started_at: new Date().toISOString() }));
    const hooks = { onQueued: async () => undefined, onRunning: async () => undefined };
    const result = await runtimeWith(retrying).invoke({ fn, version: 1, runId: "run_twice", params: {}, waitMs: 0, artifactsUrl: "https://api.example/" }, hooks);
    expect(sent).toEqual(["run_twice", "run_twice"]);
    expect(result).toMatchObject({ status: "succeeded", result_json: "7" });
    expect(stepFunctions.executions.get("run_twice")?.status).toBe("SUCCEEDED");
  });

  it("Step Functions' StartExecution: the same name and input while running is the same execution; closed, or another input, is ExecutionAlreadyExists", async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const answer = { StatusCode: 200, Payload: new TextEncoder().encode('{"status":"succeeded","retry_at":null,"account_id":null,"reinvoke":false}') };
    // The function's Lambda answers once released; the recorder at once.
    const slowLambda = { send: async (command: InvokeCommand) => (command.input.FunctionName === RECORDER_ARN ? answer : gate.then(() => answer)) };
    const slow = new InProcessStepFunctions(definition, slowLambda, { stateMachineArn: STATE_MACHINE_ARN });
    const start = (input: string) => slow.send({ constructor: { name: "StartExecutionCommand" }, input: { stateMachineArn: STATE_MACHINE_ARN, name: "run_same", input } });
    const input = JSON.stringify({ run_id: "run_same", notify: null, function: FUNCTION, timeout_seconds: 60, invoke_timeout_seconds: 120, event: {}, throttles: 0, attempt: 1 });
    const first = (await start(input)) as { executionArn: string; startDate: Date };
    expect(await start(input)).toEqual(first);
    await expect(start(input.replace("120", "121"))).rejects.toMatchObject({ name: "ExecutionAlreadyExists", $metadata: { httpStatusCode: 400 } });
    release();
    await slow.settled();
    expect(slow.executions.get("run_same")?.status).toBe("SUCCEEDED");
    await expect(start(input)).rejects.toMatchObject({ name: "ExecutionAlreadyExists", $metadata: { httpStatusCode: 400 } });
  });
});
