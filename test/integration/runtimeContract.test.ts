import { readdirSync, readFileSync } from "node:fs";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { compileCode } from "../../lambdas/code/compileCode";
import { newFunctionId } from "../../lambdas/functions/ids";
import type { FunctionItem, VersionWithCode } from "../../lambdas/functions/types";
import { systemClock } from "../../lambdas/deps";
import { createAwsRuntime } from "../../lambdas/runtime/aws/awsRuntime";
import { makeRunCompletionHandler } from "../../lambdas/runtime/aws/recordCompletion";
import { createLocalRuntime } from "../../lambdas/runtime/local/localRuntime";
import { prepareRuntimeFiles } from "../../lambdas/runtime/local/sandbox/runtimeFiles";
import { chooseSandbox } from "../../lambdas/runtime/local/sandbox/sandbox";
import type { InvokeResult, Runtime } from "../../lambdas/runtime/runtime";
import type { RunItem } from "../../lambdas/runs/types";
import type { Store } from "../../lambdas/store/store";
import { ECHO_FN, TITLE_FN } from "../helpers/code";
import { InProcessLambda } from "../helpers/inProcessLambda";
import { startMemoryStore } from "../helpers/memoryStore";
import { expectNoProcessesWith } from "../helpers/processes";
import { launchTestBrowser, type PageServer, startPageServer } from "../helpers/testBrowser";
import { functionItem, runItem } from "../helpers/records";

/** A runtime under test, its store, and how a version is made available before its deploy. */
interface Harness {
  runtime: Runtime;
  /** Where the caller records its runs (the AWS runtime reads them; its recorder ends them). */
  runs: Store["runs"];
  /** Stores the version where the runtime reads it (local: the store; AWS: nothing, the zip carries it). */
  storeVersion(version: VersionWithCode): Promise<void>;
  close(): Promise<void>;
}

/** Browsers this process started (the in-process Lambda runner's) that are still running. */
function childBrowsers(): number[] {
  return readdirSync("/proc").filter((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8").trim();
      const [, comm = "", rest = ""] = /^\d+ \((.*)\) (.*)$/.exec(stat) ?? [];
      const [state, ppid] = rest.split(" ");
      return Number(ppid) === process.pid && state !== "Z" && /chrom/i.test(comm);
    } catch {
      return false; // ended meanwhile
    }
  }).map(Number);
}

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "browserfn-contract-"));
  await chmod(dir, 0o755); // workers may run under uids of their own
  return dir;
}

async function startLocal(): Promise<Harness> {
  const memory = await startMemoryStore();
  const dir = await tempDir();
  const files = await prepareRuntimeFiles(dir, true);
  const limits = { perFunction: 1, total: 2, idleMs: 60_000 };
  const runtime = createLocalRuntime({ store: memory.store, files, sandbox: await chooseSandbox("auto", true), limits });
  return {
    runtime,
    runs: memory.store.runs,
    storeVersion: async (version) => void (await memory.store.versions.create(version)),
    close: async () => {
      await runtime.close();
      await memory.close();
      await expectNoProcessesWith(dir); // workers and their browsers
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The Lambda control plane faked in process (the runner real), its completions recorded by the real recorder. */
async function startAws(): Promise<Harness> {
  const dir = await tempDir();
  const memory = await startMemoryStore();
  const completionArn = "arn:aws:lambda:eu-west-1:123456789012:function:bfn-run-completion";
  const recorder = makeRunCompletionHandler({ store: memory.store, clock: systemClock, log: () => undefined });
  const lambda = new InProcessLambda(dir, { [completionArn]: recorder }, launchTestBrowser);
  const runtime = createAwsRuntime({
    lambda, functionPrefix: "bfn-", executionRoleArn: "arn:aws:iam::1:role/fn", layerArns: [], logGroup: "/browserfn/test/functions", pollIntervalMs: 1,
    completionArn, runs: memory.store.runs, runPollIntervalMs: 20,
  });
  return {
    runtime,
    runs: memory.store.runs,
    storeVersion: async () => undefined,
    close: async () => {
      await runtime.close();
      await lambda.close();
      await memory.close();
      expect(childBrowsers()).toEqual([]);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function contractFunction(functionId: string): FunctionItem {
  const now = new Date().toISOString();
  return functionItem({ function_id: functionId, name: "contract", status: "deploying", timeout_seconds: 30, memory_mb: 2048, created_at: now, updated_at: now, code_sha256: "" });
}

function queuedRun(fn: FunctionItem, runId: string, params: Record<string, unknown>): RunItem {
  return runItem(fn, { run_id: runId, status: "queued", params, queued_at: new Date().toISOString(), started_at: null });
}

/** The behaviour every runtime adapter shares, from deploy to the result of an invocation. */
function runtimeContract(name: string, start: () => Promise<Harness>): void {
  describe(`the ${name} runtime`, () => {
    let harness: Harness;
    let pages: PageServer;

    beforeAll(async () => {
      [harness, pages] = await Promise.all([start(), startPageServer()]);
    }, 60_000);

    afterAll(async () => {
      await harness?.close();
      await pages?.close();
    });

    /** Deploys `source` as version 1 of a new function and invokes it; `events` lists hook calls, then "done". */
    async function deployAndInvoke(source: string, params: Record<string, unknown> = {}): Promise<{ result: InvokeResult; events: string[] }> {
      const compiled = compileCode(source);
      const fn = { ...contractFunction(newFunctionId()), variables: compiled.variables, code_sha256: compiled.code_sha256 };
      const version: VersionWithCode = {
        function_id: fn.function_id, version: 1, created_at: fn.created_at, code_sha256: compiled.code_sha256,
        variables: compiled.variables, parameter_style: compiled.parameter_style, source, js: compiled.js,
      };
      await harness.storeVersion(version);
      expect(await harness.runtime.deploy(fn, version)).toEqual({ status: "active", status_reason: null });
      const events: string[] = [];
      const run = queuedRun(fn, `run_${fn.function_id}`, params);
      // As startRun does: the queued record exists before the invocation, and the running mark
      // never overwrites an end recorded meanwhile (on AWS the completion can come first).
      await harness.runs.put(run);
      const hooks = {
        onQueued: async () => void events.push("queued"),
        onRunning: async () => {
          await harness.runs.putIfActive({ ...run, status: "running", started_at: new Date().toISOString() });
          events.push("running");
        },
      };
      const result = await harness.runtime.invoke({ fn, version: 1, runId: run.run_id, completionToken: "t", params, waitMs: 10_000 }, hooks);
      events.push("done");
      return { result, events };
    }

    it("runs positional parameters, taking the automation's defaults for absent ones; hooks come first", async () => {
      const source = "export default async (a: string, b: number = 2) => ({ a, b });";
      const { result, events } = await deployAndInvoke(source, { a: "x" });
      expect(result).toMatchObject({ status: "succeeded", result_json: '{"a":"x","b":2}', error: null, logs: "" });
      expect(result.duration_ms).toBeGreaterThanOrEqual(0);
      // onQueued only for a run that waits for a cold start the runtime can see (local).
      expect([["running", "done"], ["queued", "running", "done"]]).toContainEqual(events);
    });

    it("passes object parameters as one object", async () => {
      const { result } = await deployAndInvoke(ECHO_FN, { message: "hi", times: 2 });
      expect(result).toMatchObject({ status: "succeeded", result_json: '{"echo":["hi","hi"]}' });
    });

    it("turns a thrown error into failed / function_error with its message, keeping the logs", async () => {
      const source = 'export default async () => { console.log("before", 1); throw new Error("boom"); };';
      const { result } = await deployAndInvoke(source);
      expect(result).toMatchObject({ status: "failed", result_json: null, error: { code: "function_error", message: "boom" }, logs: "LOG before 1\n" });
    });

    it("fails a result that has no JSON form with result_not_serializable", async () => {
      const { result } = await deployAndInvoke("export default async () => () => 1;");
      expect(result).toMatchObject({ status: "failed", error: { code: "result_not_serializable" } });
    });

    it("captures console output by level", async () => {
      const source = 'export default async () => { console.log("a", { n: 1 }); console.warn("b"); console.error("c"); return null; };';
      const { result } = await deployAndInvoke(source);
      expect(result).toMatchObject({ status: "succeeded", result_json: "null", logs: "LOG a { n: 1 }\nWARN b\nERROR c\n" });
    });

    it("gives a Session a browser: reads a served page's title and meters browser time", async () => {
      const { result } = await deployAndInvoke(TITLE_FN, { url: `${pages.base}/contract` });
      expect(result).toMatchObject({ status: "succeeded", result_json: '{"title":"Hello /contract","max_items":10}' });
      expect(result.browser_ms).toBeGreaterThan(0);
    }, 60_000);
  });
}

runtimeContract("local", startLocal);
runtimeContract("AWS (Lambda control plane faked, runner real)", startAws);
