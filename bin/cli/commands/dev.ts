import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { compileCode } from "../../../lambdas/code/compileCode";
import { validateParams } from "../../../lambdas/invoke/validateParams";
import { newRunId } from "../../../lambdas/runs/runIds";
import { hostStarter } from "../../../lambdas/runtime/local/localRuntime";
import { runWithLimits } from "../../../lambdas/runtime/local/runWithLimits";
import { prepareRuntimeFiles } from "../../../lambdas/runtime/local/sandbox/runtimeFiles";
import { confirmSandbox } from "../../../lambdas/runtime/local/sandbox/confirmSandbox";
import { chooseSandbox } from "../../../lambdas/runtime/local/sandbox/sandbox";
import { WorkerProcess } from "../../../lambdas/runtime/local/workerProcess";
import type { InvokeResult } from "../../../lambdas/runtime/runtime";
import { createError } from "../../../client";
import { PARAM_OPTIONS, intOption, invocationParams, positionals } from "../args";
import type { Command } from "../command";
import { LiveLogs } from "../liveLogs";
import { duration } from "../output";
import { prepareCode } from "../prepareCode";
import { asClientError } from "../serviceErrors";

/**
 * Runs the automation once in a worker sandbox and browser of its own, as the local service
 * does (BROWSERFN_SANDBOX applies; the user's own local sites are reachable, as they are the
 * usual target of a first try), and removes both (and their temp dir) on every path. The run's
 * console output goes to `onOutput` as the worker streams it.
 */
async function runOnce(
  code: ReturnType<typeof compileCode>,
  params: Record<string, unknown>,
  limits: { timeoutMs: number; memoryMb: number },
  onOutput: (text: string) => void,
): Promise<InvokeResult> {
  const runtimeDir = await mkdtemp(path.join(tmpdir(), "browserfn-dev-"));
  let worker: WorkerProcess | undefined;
  const interrupt = () => void worker?.kill("interrupted");
  process.once("SIGINT", interrupt);
  process.once("SIGTERM", interrupt);
  try {
    const files = await prepareRuntimeFiles(runtimeDir, true);
    const setting = process.env.BROWSERFN_SANDBOX === "namespaces" || process.env.BROWSERFN_SANDBOX === "process" ? process.env.BROWSERFN_SANDBOX : "auto";
    const sandbox = await confirmSandbox(await chooseSandbox(setting, true), setting, files);
    worker = await WorkerProcess.start({
      startHost: hostStarter(sandbox, files),
      init: { code: code.js, parameter_style: code.parameter_style, variables: code.variables },
    });
    const running = worker;
    const live = new LiveLogs(() => running.logsSoFar, onOutput);
    try {
      const run = await runWithLimits(running, newRunId(), params, limits);
      live.finish(run.result.logs);
      await run.finished;
      return run.result;
    } finally {
      live.stop();
    }
  } finally {
    process.off("SIGINT", interrupt);
    process.off("SIGTERM", interrupt);
    await worker?.kill("done");
    await rm(runtimeDir, { recursive: true, force: true });
  }
}

export const dev: Command = {
  summary: "run an automation file once on this machine (real Chromium), without deploying",
  usage: "browserfn dev <file.ts> [-p key=value … | --data JSON] [--timeout SECONDS] [--memory MB]",
  options: { ...PARAM_OPTIONS, timeout: { type: "string" }, memory: { type: "string" } },
  async run({ args, io, out }) {
    const [file = ""] = positionals(args, ["file.ts"]);
    const input = invocationParams(args);
    const timeoutMs = (intOption(args, "timeout", 1, 900) ?? 300) * 1000;
    const memoryMb = intOption(args, "memory", 128, 10240) ?? 1024;
    const bundled = await prepareCode(file, out);
    let compiled: ReturnType<typeof compileCode>;
    let params: Record<string, unknown>;
    try {
      compiled = compileCode(bundled.code);
      params = validateParams(compiled.variables, input.params ?? {}, input.kind, compiled.input_schema);
    } catch (error) {
      throw asClientError(error);
    }
    out.note(`Running ${path.basename(file)}…`);
    // The automation's console output goes to stderr as it is written.
    const result = await runOnce(compiled, params, { timeoutMs, memoryMb }, (text) => io.stderr.write(text));
    if (result.status !== "succeeded") {
      const error = result.error ?? { code: "function_error", message: `The run ${result.status}` };
      throw createError({ status: error.code === "function_timeout" ? 504 : 500, code: error.code, message: error.message });
    }
    out.printJson(JSON.parse(result.result_json ?? "null"));
    if (!out.json) out.note(`${result.status} in ${duration(result.duration_ms)}`);
    return 0;
  },
};

