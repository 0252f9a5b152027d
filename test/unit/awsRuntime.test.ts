import { createHash } from "node:crypto";
import { ResourceConflictException, ResourceNotFoundException } from "@aws-sdk/client-lambda";
import { strFromU8, unzipSync } from "fflate";
import type { FunctionItem, VersionWithCode } from "../../lambdas/functions/types";
import { createAwsRuntime } from "../../lambdas/runtime/aws/awsRuntime";
import type { LambdaCommand } from "../../lambdas/runtime/aws/lambdaClient";
import { functionItem } from "../helpers/records";

const FUNCTION_ID = "fn_01jabcdefghjkmnpqrstvwxyz0";
const NAME = `bfn-${FUNCTION_ID}`;
const ROLE = "arn:aws:iam::123456789012:role/browserfn-function";
const LAYERS = ["arn:aws:lambda:eu-central-1:123456789012:layer:chromium:3", "arn:aws:lambda:eu-central-1:123456789012:layer:runtime:7"];
const LOG_GROUP = "/browserfn/bfn/functions";
const ACTIVE = {
  State: "Active", LastUpdateStatus: "Successful", MemorySize: 1024, Timeout: 305, EphemeralStorage: { Size: 2048 }, Runtime: "nodejs22.x", Role: ROLE,
  Handler: "index.handler", Layers: LAYERS.map((Arn) => ({ Arn })), LoggingConfig: { LogGroup: LOG_GROUP, LogFormat: "Text" },
};
const STATE_MACHINE = "arn:aws:states:eu-central-1:123456789012:stateMachine:bfn-runs";
const SETTINGS = {
  Runtime: "nodejs22.x", Role: ROLE, Handler: "index.handler", MemorySize: 1024, Timeout: 305, EphemeralStorage: { Size: 2048 }, Layers: LAYERS,
  Environment: { Variables: {} }, LoggingConfig: { LogGroup: LOG_GROUP, LogFormat: "Text" },
};

type Reply = unknown | Error;

/** Records every command; answers from per-command queues of scripted replies, then defaults. */
class FakeLambda {
  readonly sent: LambdaCommand[] = [];
  private readonly queues = new Map<string, Reply[]>();
  private readonly defaults: Record<string, Reply> = { GetFunctionConfigurationCommand: ACTIVE, PublishVersionCommand: { Version: "7" } };

  reply(command: string, ...replies: Reply[]): this {
    this.queues.set(command, [...(this.queues.get(command) ?? []), ...replies]);
    return this;
  }

  async send(command: LambdaCommand): Promise<unknown> {
    this.sent.push(command);
    const queued = this.queues.get(command.constructor.name)?.shift();
    const reply = queued ?? this.defaults[command.constructor.name] ?? {};
    if (reply instanceof Error) throw reply;
    return reply;
  }

  calls(): [string, unknown][] {
    return this.sent.map((command) => [command.constructor.name, command.input]);
  }

  names(): string[] {
    return this.sent.map((command) => command.constructor.name);
  }
}

const meta = { $metadata: {} };
const conflict = () => new ResourceConflictException({ ...meta, message: "Function already exist: x" });
const notFound = () => new ResourceNotFoundException({ ...meta, message: "Function not found: x" });

function fn(overrides: Partial<FunctionItem> = {}): FunctionItem {
  return functionItem({ function_id: FUNCTION_ID, status: "deploying", ...overrides });
}

function version(n: number): VersionWithCode {
  return {
    function_id: FUNCTION_ID, version: n, created_at: "2026-01-01T00:00:00.000Z", code_sha256: "0".repeat(64),
    variables: [{ name: "url", type: "string", required: true }], parameter_style: "positional",
    source: "export default async (url: string) => url;", js: `exports.default = async (url) => url; // v${n}`,
  };
}

/** Step Functions and the outcome bucket: deploy, configure and remove never reach them. */
const unused = { send: async () => Promise.reject(new Error("a deploy started a run")) };
const outcomes = {
  uploads: async () => Promise.reject(new Error("a deploy signed uploads")),
};

/** `client` is the control plane's. */
function setup(client = new FakeLambda()) {
  const sleeps: number[] = [];
  const runtime = createAwsRuntime({
    lambda: client, stepFunctions: unused, stateMachineArn: STATE_MACHINE, outcomes, functionPrefix: "bfn-", executionRoleArn: ROLE, executionRoleId: "AROAEXAMPLEEXECUTION", layerArns: LAYERS, logGroup: LOG_GROUP,
    runs: { get: async () => undefined },
    pollIntervalMs: 10, activeTimeoutMs: 30, sleep: async (ms) => void sleeps.push(ms),
  });
  return { client, runtime, sleeps };
}

const zipOf = (command: LambdaCommand) => {
  const input = command.input as { Code?: { ZipFile: Uint8Array }; ZipFile?: Uint8Array };
  return (input.Code?.ZipFile ?? input.ZipFile) as Uint8Array;
};
const sha = (zip: Uint8Array) => createHash("sha256").update(zip).digest("base64");

describe("the AWS runtime: deploy (the exact Lambda calls)", () => {
  it("creates version 1, waits for Active, publishes it, points v1 and live at it (no async destination: the run workflow invokes it)", async () => {
    const { client, runtime } = setup();
    client.reply("PublishVersionCommand", { Version: "1" });
    expect(await runtime.deploy(fn(), version(1))).toEqual({ status: "active", status_reason: null });
    const zip = zipOf(client.sent[0]!);
    expect(client.calls()).toEqual([
      ["CreateFunctionCommand", { FunctionName: NAME, ...SETTINGS, Code: { ZipFile: zip }, Architectures: ["x86_64"], Publish: false, Tags: { "browserfn:function_id": FUNCTION_ID, "browserfn:account_id": "acct" } }],
      ["GetFunctionConfigurationCommand", { FunctionName: NAME }],
      ["PublishVersionCommand", { FunctionName: NAME, CodeSha256: sha(zip), Description: "browserfn version 1" }],
      ["CreateAliasCommand", { FunctionName: NAME, Name: "v1", FunctionVersion: "1" }],
      ["CreateAliasCommand", { FunctionName: NAME, Name: "live", FunctionVersion: "1" }],
    ]);
    const files = unzipSync(zip);
    expect(Object.keys(files).sort()).toEqual(["code.cjs", "index.js", "meta.json"]);
    expect(strFromU8(files["index.js"]!)).toBe('exports.handler = require("/opt/nodejs/browserfn-runner.cjs").createLambdaHandler(__dirname);\n');
    expect(strFromU8(files["code.cjs"]!)).toBe(version(1).js);
    expect(JSON.parse(strFromU8(files["meta.json"]!))).toEqual({ parameter_style: "positional", variables: version(1).variables });
  });

  it("polls through Pending until the function is Active", async () => {
    const { client, runtime, sleeps } = setup();
    client.reply("GetFunctionConfigurationCommand", { State: "Pending", LastUpdateStatus: "InProgress" }, { State: "Pending" }, ACTIVE);
    expect(await runtime.deploy(fn(), version(1))).toEqual({ status: "active", status_reason: null });
    expect(client.names().filter((name) => name === "GetFunctionConfigurationCommand")).toHaveLength(3);
    expect(sleeps).toEqual([10, 10]);
  });

  it("reports failed, with Lambda's reason, when the function becomes Failed; nothing is published", async () => {
    const { client, runtime } = setup();
    client.reply("GetFunctionConfigurationCommand", { State: "Failed", StateReasonCode: "InvalidZipFileException", StateReason: "Could not unzip" });
    expect(await runtime.deploy(fn(), version(1))).toEqual({ status: "failed", status_reason: "Lambda reports the function Failed: InvalidZipFileException Could not unzip" });
    expect(client.names()).toEqual(["CreateFunctionCommand", "GetFunctionConfigurationCommand"]);
  });

  it("reports failed when Lambda does not make the function Active in time", async () => {
    const { client, runtime, sleeps } = setup();
    const pending = { State: "Pending", LastUpdateStatus: "InProgress" };
    client.reply("GetFunctionConfigurationCommand", pending, pending, pending, pending);
    expect(await runtime.deploy(fn(), version(1))).toEqual({
      status: "failed",
      status_reason: "Timed out after 0.03 s waiting for Lambda to make the function Active (State Pending, LastUpdateStatus InProgress)",
    });
    expect(sleeps).toEqual([10, 10, 10]);
  });

  it("updates the code of a later version, publishes it, creates v2 and moves live", async () => {
    const { client, runtime } = setup();
    expect(await runtime.deploy(fn({ latest_version: 2 }), version(2))).toEqual({ status: "active", status_reason: null });
    const zip = zipOf(client.sent[0]!);
    expect(strFromU8(unzipSync(zip)["code.cjs"]!)).toBe(version(2).js);
    expect(client.calls()).toEqual([
      ["UpdateFunctionCodeCommand", { FunctionName: NAME, ZipFile: zip, Architectures: ["x86_64"], Publish: false }],
      ["GetFunctionConfigurationCommand", { FunctionName: NAME }],
      ["PublishVersionCommand", { FunctionName: NAME, CodeSha256: sha(zip), Description: "browserfn version 2" }],
      ["CreateAliasCommand", { FunctionName: NAME, Name: "v2", FunctionVersion: "7" }],
      ["UpdateAliasCommand", { FunctionName: NAME, Name: "live", FunctionVersion: "7" }],
    ]);
  });

  it("updates the configuration too when memory or timeout changed", async () => {
    const { client, runtime } = setup();
    await runtime.deploy(fn({ memory_mb: 2048, timeout_seconds: 60 }), version(3));
    expect(client.names()).toEqual([
      "UpdateFunctionCodeCommand", "GetFunctionConfigurationCommand", "UpdateFunctionConfigurationCommand",
      "GetFunctionConfigurationCommand", "PublishVersionCommand", "CreateAliasCommand", "UpdateAliasCommand",
    ]);
    expect(client.sent[2]!.input).toEqual({ FunctionName: NAME, ...SETTINGS, MemorySize: 2048, Timeout: 65 });
  });

  it("moves a Lambda created before the stack's function log group (Lambda's default /aws/lambda/<name>) to it", async () => {
    const { client, runtime } = setup();
    const { LoggingConfig: _moved, ...beforeLogGroup } = ACTIVE;
    client.reply("GetFunctionConfigurationCommand", { ...beforeLogGroup, LoggingConfig: { LogGroup: `/aws/lambda/${NAME}`, LogFormat: "Text" } });
    await runtime.deploy(fn(), version(2));
    expect(client.names().slice(0, 3)).toEqual(["UpdateFunctionCodeCommand", "GetFunctionConfigurationCommand", "UpdateFunctionConfigurationCommand"]);
    expect(client.sent[2]!.input).toEqual({ FunctionName: NAME, ...SETTINGS });
  });

  it("gives a Lambda created with Lambda's default /tmp (512 MB) the larger one at its next deploy", async () => {
    const { client, runtime } = setup();
    client.reply("GetFunctionConfigurationCommand", { ...ACTIVE, EphemeralStorage: { Size: 512 } });
    await runtime.deploy(fn(), version(2));
    expect(client.names().slice(0, 3)).toEqual(["UpdateFunctionCodeCommand", "GetFunctionConfigurationCommand", "UpdateFunctionConfigurationCommand"]);
    expect(client.sent[2]!.input).toEqual({ FunctionName: NAME, ...SETTINGS }); // EphemeralStorage 2048 MB among them
  });

  it("is idempotent: an existing function takes the update path, existing aliases are moved", async () => {
    const { client, runtime } = setup();
    client.reply("CreateFunctionCommand", conflict()).reply("CreateAliasCommand", conflict());
    expect(await runtime.deploy(fn(), version(1))).toEqual({ status: "active", status_reason: null });
    expect(client.names()).toEqual([
      "CreateFunctionCommand", "UpdateFunctionCodeCommand", "GetFunctionConfigurationCommand", "PublishVersionCommand",
      "CreateAliasCommand", "UpdateAliasCommand", "UpdateAliasCommand",
    ]);
    expect(client.sent[5]!.input).toEqual({ FunctionName: NAME, Name: "v1", FunctionVersion: "7" });
    expect(client.sent[6]!.input).toEqual({ FunctionName: NAME, Name: "live", FunctionVersion: "7" });
  });

  it("creates the Lambda of a later version when it is missing (the create of version 1 failed)", async () => {
    const { client, runtime } = setup();
    client.reply("UpdateFunctionCodeCommand", notFound());
    expect(await runtime.deploy(fn({ latest_version: 2 }), version(2))).toEqual({ status: "active", status_reason: null });
    expect(client.names()).toEqual([
      "UpdateFunctionCodeCommand", "CreateFunctionCommand", "GetFunctionConfigurationCommand", "PublishVersionCommand",
      "CreateAliasCommand", "CreateAliasCommand",
    ]);
    expect(client.sent[5]!.input).toEqual({ FunctionName: NAME, Name: "live", FunctionVersion: "7" });
  });

  it("waits for an update in progress, then sends its own once more", async () => {
    const { client, runtime } = setup();
    client.reply("UpdateFunctionCodeCommand", new ResourceConflictException({ ...meta, message: "An update is in progress" }));
    await runtime.deploy(fn(), version(2));
    expect(client.names().slice(0, 4)).toEqual(["UpdateFunctionCodeCommand", "GetFunctionConfigurationCommand", "UpdateFunctionCodeCommand", "GetFunctionConfigurationCommand"]);
  });

  it("configure applies settings, publishes them (only over v4's own code) and moves the latest version's alias and live", async () => {
    const { client, runtime } = setup();
    client.reply("GetFunctionConfigurationCommand", { ...ACTIVE, CodeSha256: "sha-of-v4" }, ACTIVE);
    expect(await runtime.configure!(fn({ latest_version: 4, memory_mb: 3008 }))).toEqual({ status: "active", status_reason: null });
    expect(client.calls()).toEqual([
      ["GetFunctionConfigurationCommand", { FunctionName: NAME, Qualifier: "v4" }],
      ["UpdateFunctionConfigurationCommand", { FunctionName: NAME, ...SETTINGS, MemorySize: 3008 }],
      ["GetFunctionConfigurationCommand", { FunctionName: NAME }],
      ["PublishVersionCommand", { FunctionName: NAME, CodeSha256: "sha-of-v4", Description: "browserfn version 4" }],
      ["UpdateAliasCommand", { FunctionName: NAME, Name: "v4", FunctionVersion: "7" }],
      ["UpdateAliasCommand", { FunctionName: NAME, Name: "live", FunctionVersion: "7" }],
    ]);
  });

  it("refuses a prefix that would make names longer than 64 characters", () => {
    expect(() => createAwsRuntime({ lambda: new FakeLambda(), stepFunctions: unused, stateMachineArn: STATE_MACHINE, outcomes, functionPrefix: "x".repeat(36), executionRoleArn: ROLE, executionRoleId: "AROAEXAMPLEEXECUTION", layerArns: [], logGroup: LOG_GROUP, runs: { get: async () => undefined } })).toThrow(/at most 35/);
  });
});

describe("the AWS runtime: remove", () => {
  it("deletes the function, and ignores one that is gone already", async () => {
    const { client, runtime } = setup();
    client.reply("DeleteFunctionCommand", {}, notFound(), Object.assign(new Error("boom"), { name: "ServiceException" }));
    await runtime.remove(fn());
    await runtime.remove(fn());
    await expect(runtime.remove(fn())).rejects.toThrow("boom");
    expect(client.calls()).toEqual(Array(3).fill(["DeleteFunctionCommand", { FunctionName: NAME }]));
  });
});
