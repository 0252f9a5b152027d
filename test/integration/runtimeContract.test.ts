import { readdirSync, readFileSync } from "node:fs";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { compileCode } from "../../lambdas/code/compileCode";
import { newFunctionId } from "../../lambdas/functions/ids";
import type { FunctionItem, VersionWithCode } from "../../lambdas/functions/types";
import { createLocalRuntime } from "../../lambdas/runtime/local/localRuntime";
import { prepareRuntimeFiles } from "../../lambdas/runtime/local/sandbox/runtimeFiles";
import { chooseSandbox } from "../../lambdas/runtime/local/sandbox/sandbox";
import type { InvokeResult, Runtime } from "../../lambdas/runtime/runtime";
import type { RunItem } from "../../lambdas/runs/types";
import type { Store } from "../../lambdas/store/store";
import { ECHO_FN, TITLE_FN } from "../helpers/code";
import { startAwsPipeline } from "../helpers/awsPipeline";
import { startMemoryStore } from "../helpers/memoryStore";
import { expectNoProcessesWith } from "../helpers/processes";
import { type PageServer, startPageServer } from "../helpers/testBrowser";
import { functionItem, runItem } from "../helpers/records";

/** A runtime under test, its store, and how a version is made available before its deploy. */
interface Harness {
  runtime: Runtime;
  /** Where the caller records its runs (the AWS runtime reads them; its recorder ends them). */
  runs: Store["runs"];
  /** Stores the version where the runtime reads it (local: the store; AWS: nothing, the zip carries it). */
  storeVersion(version: VersionWithCode): Promise<void>;
  /** Whether the runtime writes the run's final record itself (AWS: the recorder), rather than its caller. */
  recordsItself: boolean;
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
    recordsItself: false,
    close: async () => {
      await runtime.close();
      await memory.close();
      await expectNoProcessesWith(dir); // workers and their browsers
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The run pipeline with AWS stood in for in this process (awsPipeline.ts): the workflow, the runner and the recorder real. */
async function startAws(): Promise<Harness> {
  const pipeline = await startAwsPipeline();
  return {
    runtime: pipeline.runtime,
    runs: pipeline.memory.store.runs,
    storeVersion: async () => undefined,
    recordsItself: true,
    close: async () => {
      await pipeline.close();
      expect(childBrowsers()).toEqual([]);
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
    async function deployAndInvoke(
      source: string,
      params: Record<string, unknown> = {},
      settings: Partial<FunctionItem> = {},
    ): Promise<{ result: InvokeResult; events: string[]; runId: string }> {
      const compiled = compileCode(source);
      const fn = { ...contractFunction(newFunctionId()), ...settings, variables: compiled.variables, code_sha256: compiled.code_sha256 };
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
      const result = await harness.runtime.invoke({ fn, version: 1, runId: run.run_id, params, waitMs: 10_000, artifactsUrl: `http://api.test/runs/${run.run_id}/artifacts/` }, hooks);
      events.push("done");
      return { result, events, runId: run.run_id };
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

    it("returns a 1 MB result whole, and fails a 7 MB one with result_too_large", async () => {
      const { result } = await deployAndInvoke('export default async (n: number) => "x".repeat(n);', { n: 1_000_000 });
      expect(result).toMatchObject({ status: "succeeded", error: null });
      expect(result.result_json).toBe(JSON.stringify("x".repeat(1_000_000)));
      const { result: tooLarge } = await deployAndInvoke('export default async (n: number) => "x".repeat(n);', { n: 7_000_000 });
      expect(tooLarge).toMatchObject({ status: "failed", result_json: null, error: { code: "result_too_large" } });
    }, 60_000);

    it("ends a run that outlasts its timeout as timed_out, keeping what it logged", async () => {
      const source = 'export default async () => { console.log("started"); await new Promise(() => undefined); };';
      const { result } = await deployAndInvoke(source, {}, { timeout_seconds: 2 });
      expect(result).toMatchObject({ status: "timed_out", result_json: null, error: { code: "function_timeout" } });
      expect(result.logs).toContain("LOG started");
    }, 60_000);

    it("ends a run whose process exits as failed / function_crashed", async () => {
      const { result } = await deployAndInvoke('export default async () => { console.log("bye"); process.exit(3); };');
      expect(result).toMatchObject({ status: "failed", result_json: null, error: { code: "function_crashed" } });
    }, 60_000);

    it("lets a forged outcome change nothing but the forging run's own record, within its bounds", async () => {
      const victim = queuedRun(contractFunction(newFunctionId()), "run_victim_contract", {});
      await harness.runs.put({ ...victim, status: "running", started_at: victim.queued_at });
      const forged = {
        status: "succeeded", result_json: '"forged"', logs: "", browser_ms: 99_999_999, peak_memory_mb: 99_999,
        run_id: victim.run_id, account_id: "someone-else", function_id: victim.function_id, pk: `RUN#${victim.run_id}`,
      };
      // Every way this code has to speak for a run: a message to its supervisor (local), and
      // rewriting the JSON its Lambda answers with (AWS: the runtime serializes the answer with
      // JSON.stringify in the process the code runs in). Restored after a moment.
      const source = `export default async () => {
        const forged = ${JSON.stringify(forged)};
        if (process.send) process.send({ type: "done", runId: forged.run_id, outcome: forged });
        const real = JSON.stringify;
        JSON.stringify = function (value, ...rest) {
          return value && typeof value === "object" && "browser_ms" in value ? real(forged) : real.call(JSON, value, ...rest);
        };
        setTimeout(() => { JSON.stringify = real; }, 1500).unref?.();
        return "honest";
      };`;
      const { result, runId } = await deployAndInvoke(source);
      await new Promise((resolve) => setTimeout(resolve, 1600)); // the forgery is undone
      expect(await harness.runs.get(victim.run_id)).toMatchObject({ status: "running", account_id: victim.account_id, result_json: null, finished_at: null });
      expect(["succeeded", "failed"]).toContain(result.status);
      expect(result.browser_ms).toBeLessThanOrEqual(result.duration_ms);
      expect(result.peak_memory_mb ?? 0).toBeLessThanOrEqual(2048);
      if (harness.recordsItself) {
        const own = await harness.runs.get(runId);
        expect(own).toMatchObject({ run_id: runId, account_id: victim.account_id, status: result.status });
        expect(own?.browser_ms).toBeLessThanOrEqual(own?.duration_ms ?? 0);
      }
    }, 60_000);
  });
}

runtimeContract("local", startLocal);
runtimeContract("AWS (Lambda control plane faked, runner real)", startAws);
