import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
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
import { PARAM_OPTIONS, UsageError, intOption, invocationParams, positionals, stringOption } from "../args";
import type { Command } from "../command";
import { type DevArtifacts, devArtifacts } from "../devArtifacts";
import { LiveLogs } from "../liveLogs";
import { duration } from "../output";
import { prepareCode } from "../prepareCode";
import { asClientError } from "../serviceErrors";

/** Where a run's artifacts go without --artifacts: `<this>/<run id>/`, under the current directory. */
const DEFAULT_ARTIFACTS_DIR = "browserfn-artifacts";

/**
 * Runs the automation once in a worker sandbox and browser of its own, as the local service
 * does (BROWSERFN_SANDBOX applies; the user's own local sites are reachable, as they are the
 * usual target of a first try), and removes both (and their temp dir) on every path. The run's
 * console output goes to `onOutput` as the worker streams it, its artifacts to `run.artifacts`.
 */
async function runOnce(
  code: ReturnType<typeof compileCode>,
  params: Record<string, unknown>,
  limits: { timeoutMs: number; memoryMb: number },
  onOutput: (text: string) => void,
  run: { runId: string; artifacts: DevArtifacts; artifactsUrl: string },
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
      startHost: hostStarter(sandbox, files, limits.memoryMb),
      init: { code: code.js, parameter_style: code.parameter_style, variables: code.variables },
    });
    const running = worker;
    const live = new LiveLogs(() => running.logsSoFar, onOutput);
    try {
      let limited;
      try {
        limited = await runWithLimits(running, run.runId, params, limits, { artifactsUrl: run.artifactsUrl, artifacts: run.artifacts });
      } finally {
        await run.artifacts.finish();
      }
      live.finish(limited.result.logs);
      await limited.finished;
      return limited.result;
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
  usage: "browserfn dev <file.ts> [-p key=value … | --data JSON] [--timeout SECONDS] [--memory MB] [--artifacts DIR]",
  options: { ...PARAM_OPTIONS, timeout: { type: "string" }, memory: { type: "string" }, artifacts: { type: "string" } },
  async run({ args, io, out }) {
    const [file = ""] = positionals(args, ["file.ts"]);
    const artifactsOption = stringOption(args, "artifacts");
    if (artifactsOption === "") throw new UsageError("--artifacts needs a directory");
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
    const runId = newRunId();
    // The run's artifacts (artifacts.save, failure evidence, downloads) go to files, each named on stderr as it is complete.
    const artifactsDir = path.resolve(artifactsOption ?? path.join(DEFAULT_ARTIFACTS_DIR, runId));
    const artifacts = devArtifacts(
      artifactsDir,
      (artifact) => out.note(`Saved ${artifact.path} (${artifact.bytes} bytes, ${artifact.content_type})`),
      (name, why) => out.note(`Dropped the artifact ${name}: ${why}`),
    );
    out.note(`Running ${path.basename(file)} (run ${runId})…`);
    // The automation's console output goes to stderr as it is written.
    const result = await runOnce(compiled, params, { timeoutMs, memoryMb }, (text) => io.stderr.write(text), {
      runId,
      artifacts,
      artifactsUrl: `${pathToFileURL(artifactsDir).href}/`,
    });
    if (artifacts.saved.length > 0) out.note(`${artifacts.saved.length} artifact(s) in ${artifactsDir}`);
    if (result.status !== "succeeded") {
      const error = result.error ?? { code: "function_error", message: `The run ${result.status}` };
      throw createError({ status: error.code === "function_timeout" ? 504 : 500, code: error.code, message: error.message });
    }
    out.printJson(JSON.parse(result.result_json ?? "null"));
    if (!out.json) out.note(`${result.status} in ${duration(result.duration_ms)}`);
    return 0;
  },
};

