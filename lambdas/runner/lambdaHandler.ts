/**
 * The handler of every function's Lambda. It ships in the runtime layer, bundled by
 * buildLambdaRunnerBundle into `/opt/nodejs/browserfn-runner.cjs`; each function's zip holds
 * only its code and a one-line `index.js` that calls createLambdaHandler (lambdaFunctionIndex;
 * the layer path contract is in lambdaPackage.ts).
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { Browser } from "puppeteer-core";
import { launchLambdaChromium, warmBrowser } from "./lambdaBrowser";
import type { FunctionMeta, LambdaRunEvent } from "./lambdaPackage";
import type { RunOutcome } from "./protocol";
import { processTreeMb, watchMemory } from "../runtime/local/processTree";
import { startInvocation } from "./runInvocation";

export { type FunctionMeta, type LambdaRunEvent, lambdaFunctionIndex, RUNNER_LAYER_PATH } from "./lambdaPackage";

export interface LambdaHandlerOptions {
  /** How the container's browser is launched (default: @sparticuz/chromium from the chromium layer). */
  launchBrowser?: () => Promise<Browser>;
}

/** How often a run's memory is sampled (the Node process and its browser): its peak is reported with the outcome. */
const MEMORY_SAMPLE_MS = 100;

/** A function's Lambda handler; `close()` closes its browser (for tests; Lambda just freezes the container). */
export type LambdaRunHandler = ((event: LambdaRunEvent) => Promise<RunOutcome>) & { close(): Promise<void> };

async function loadCode(codeDir: string): Promise<{ js: string; meta: FunctionMeta }> {
  const js = await readFile(path.join(codeDir, "code.cjs"), "utf8");
  const meta = JSON.parse(await readFile(path.join(codeDir, "meta.json"), "utf8")) as FunctionMeta;
  if (meta.parameter_style !== "positional" && meta.parameter_style !== "object") {
    throw new Error("meta.json has no valid parameter_style");
  }
  if (!Array.isArray(meta.variables)) throw new Error("meta.json has no variables");
  return { js, meta };
}

function checkEvent(event: LambdaRunEvent): void {
  const valid =
    typeof event?.run_id === "string" &&
    typeof event.params === "object" &&
    event.params !== null &&
    !Array.isArray(event.params) &&
    typeof event.timeout_ms === "number" &&
    event.timeout_ms > 0;
  if (!valid) throw new Error("The event must be { run_id: string, params: object, timeout_ms: number }");
}

/**
 * Creates the handler of the function whose code is in `codeDir` (`code.cjs`, the version's
 * compiled CommonJS, and `meta.json`, see FunctionMeta). The code is read once per container;
 * the browser is launched when a run first needs it and stays warm for the next invocations.
 *
 * Each invocation runs the automation with runInvocation and returns its RunOutcome: errors of
 * the user's code are a `failed` outcome, never a thrown error. The outcome carries the peak
 * memory of this process and its browser, sampled every MEMORY_SAMPLE_MS while the run goes on
 * (Lambda's own "Max Memory Used" reaches only its logs). Only a broken deployment (no
 * code, a bad event) throws, which Lambda reports as a FunctionError. The outcome is returned
 * as soon as the automation's sessions are closed; the browser is reset for the next run
 * afterwards, and the next invocation waits for that reset first (Lambda may freeze the
 * container in between; the reset then finishes when it thaws).
 *
 * Unlike a local worker, an unhandled promise rejection in user code ends the invocation:
 * the Lambda Node runtime reports it as an error and restarts the runtime process.
 */
export function createLambdaHandler(codeDir: string, options: LambdaHandlerOptions = {}): LambdaRunHandler {
  const browser = warmBrowser(options.launchBrowser ?? launchLambdaChromium);
  let code: Promise<{ js: string; meta: FunctionMeta }> | undefined;
  // The previous run's browser reset: each run starts after it (Lambda sends one event at a
  // time per container; this keeps that true for any other caller too).
  let previous: Promise<void> = Promise.resolve();

  const handler = async (event: LambdaRunEvent): Promise<RunOutcome> => {
    checkEvent(event);
    if (!code) {
      code = loadCode(codeDir);
      code.catch(() => (code = undefined)); // a failed read is tried again by the next invocation
    }
    const { js, meta } = await code;
    const { params, timeout_ms: timeoutMs } = event;
    const getBrowser = () => browser.get();
    const run = previous.then(() => {
      const memory = watchMemory(() => processTreeMb(process.pid), MEMORY_SAMPLE_MS);
      void memory.sample(); // from the start: a short run gets a measure too
      const started = startInvocation({ code: js, params, style: meta.parameter_style, variables: meta.variables, getBrowser, timeoutMs });
      const outcome = started.outcome.then(
        async (ended): Promise<RunOutcome> => {
          memory.stop();
          await memory.sample();
          return { ...ended, peak_memory_mb: Math.round(memory.peak) };
        },
        (error: unknown) => {
          memory.stop();
          throw error;
        },
      );
      return { outcome, settled: started.settled };
    });
    previous = run.then((started) => started.settled);
    return (await run).outcome;
  };
  return Object.assign(handler, {
    async close() {
      await previous;
      await browser.close();
    },
  });
}
