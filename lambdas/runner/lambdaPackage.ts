/**
 * What the AWS runtime adapter and the Lambda runner (lambdaHandler.ts) agree on: the files
 * of a function's zip, the event it is invoked with, and where the runner lives. Free of heavy
 * imports, so the API's Lambdas can build packages without bundling puppeteer-core.
 */
import type { ParameterInfo, ParameterStyle } from "../code/extractParameters";

/**
 * Where the runtime layer puts the runner. Lambda unpacks every layer of a function under /opt,
 * so the runtime layer's zip holds `nodejs/browserfn-runner.cjs` (buildLambdaRunnerBundle makes
 * that layout) and the chromium layer `nodejs/node_modules/@sparticuz/chromium`: the runner
 * finds the package by Node's usual walk up from /opt/nodejs (ES modules ignore NODE_PATH).
 */
export const RUNNER_LAYER_PATH = "/opt/nodejs/browserfn-runner.cjs";

/** The event a function's Lambda is invoked with. */
export interface LambdaRunEvent {
  run_id: string;
  /** Parameters by name, validated against the version's variables. */
  params: Record<string, unknown>;
  /** The function's timeout: sessions are closed before it passes (Lambda enforces it). */
  timeout_ms: number;
  /** The run's completion_token: the run-completion Lambda checks it (the runner ignores it). */
  completion_token: string;
}

/** `meta.json` in a function's zip: how the runner calls `code.cjs`. */
export interface FunctionMeta {
  parameter_style: ParameterStyle;
  variables: ParameterInfo[];
}

/** The `index.js` of every function's zip: its handler is the runner from the runtime layer. */
export function lambdaFunctionIndex(): string {
  return `exports.handler = require(${JSON.stringify(RUNNER_LAYER_PATH)}).createLambdaHandler(__dirname);\n`;
}
