import path from "node:path";

/** The file name of the bundled analysis worker, beside a Lambda's `index.mjs` (see lib/handlerFunction.ts). */
export const ANALYSIS_WORKER_BUNDLE = "analysisWorker.cjs";

/** How an analysis worker thread is started: the module it runs, after `register` (a require hook) when set. */
export interface AnalysisWorkerScript {
  entry: string;
  register?: string;
}

/**
 * The worker from the TypeScript sources, compiled by tsx as it loads (`npm start`, the tests):
 * a worker thread does not share its parent's require hooks, so it registers tsx itself.
 */
export function sourceWorkerScript(): AnalysisWorkerScript {
  return { entry: path.join(__dirname, "analysisWorker.ts"), register: require.resolve("tsx/cjs") };
}

/** The worker bundled into `dir` (a Lambda's code directory) as ANALYSIS_WORKER_BUNDLE. */
export function bundledWorkerScript(dir: string): AnalysisWorkerScript {
  return { entry: path.join(dir, ANALYSIS_WORKER_BUNDLE) };
}

/** What a worker thread evaluates first: loads `register` (when set), then the entry (both from workerData). */
export const WORKER_BOOTSTRAP = `
const { workerData } = require("node:worker_threads");
if (workerData.register) require(workerData.register);
require(workerData.entry);
`;

/**
 * esbuild's command-line arguments that bundle the worker (analysisWorker.ts, the compiler
 * code and TypeScript) into one CommonJS file, `outfile`, for a Lambda's Node.
 */
export function analysisWorkerBundleArgs(projectRoot: string, outfile: string): string[] {
  return [
    path.join(projectRoot, "lambdas", "code", "analysis", "analysisWorker.ts"),
    "--bundle",
    "--platform=node",
    "--format=cjs",
    "--target=node20",
    "--minify",
    "--log-level=error",
    `--outfile=${outfile}`,
  ];
}
