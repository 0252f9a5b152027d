import type { ProxySettings } from "../proxy/proxySettings";
/**
 * What the AWS runtime adapter and the Lambda runner (lambdaHandler.ts) agree on: the files
 * of a function's zip, the event it is invoked with, and where the runner lives. Free of heavy
 * imports, so the API's Lambdas can build packages without bundling puppeteer-core.
 */
import type { RecordingMode } from "../recording/recordingMode";
import type { ParameterInfo, ParameterStyle } from "../code/extractParameters";
import type { RunOutcome } from "./protocol";

/**
 * Where the runtime layer puts the runner. Lambda unpacks every layer of a function under /opt,
 * so the runtime layer's zip holds `nodejs/browserfn-runner.cjs` (buildLambdaRunnerBundle makes
 * that layout) and the chromium layer `nodejs/node_modules/@sparticuz/chromium`: the runner
 * finds the package by Node's usual walk up from /opt/nodejs (ES modules ignore NODE_PATH).
 */
export const RUNNER_LAYER_PATH = "/opt/nodejs/browserfn-runner.cjs";

/**
 * The event a function's Lambda is invoked with. It holds nothing secret of the service: the
 * automation's code runs in the same process and can read it.
 */
export interface LambdaRunEvent {
  run_id: string;
  /** Parameters by name, validated against the version's variables. */
  params: Record<string, unknown>;
  /**
   * The function's timeout: the runner stops the run when it passes (or earlier, when Lambda
   * leaves less time) and answers `function_timeout` with the logs so far.
   */
  timeout_ms: number;
  /**
   * A presigned S3 PUT URL for this run's outcome: the runner uploads an outcome whose JSON is
   * over INLINE_ANSWER_BYTES there and answers an UploadedAnswer instead. Without it, such an
   * outcome becomes a small failed one.
   */
  outcome_upload_url?: string;
  /** Where the run's artifacts go (a presigned POST under `artifacts/<run_id>/`); without it a run keeps none. */
  artifact_upload?: { url: string; fields: Record<string, string>; keyPrefix: string };
  /** Where the API serves the run's artifacts (the name is appended): what `artifacts.save` answers. */
  artifacts_url?: string;
  /**
   * The function's secrets, sealed by KMS for this function's Lambda session (`runner`): the
   * runner opens each with the context `{function_id, secret: name, runner}`.
   */
  secrets?: SealedSecrets;
  /** The function's `recording` setting (absent: off): which runs keep their pages' recordings (lambdas/recording). */
  recording?: RecordingMode;
  /** The function's proxy setting (never a password: the runner reads it from the secrets it opens, by `password_secret`). */
  proxy?: ProxySettings;
}

/** A function's secrets as its run's event carries them. */
export interface SealedSecrets {
  function_id: string;
  runner: string;
  items: { name: string; sealed: string }[];
}

/**
 * The most UTF-8 bytes of JSON the runner answers with: the answer passes through Step
 * Functions, whose state holds 256 KB at most (with room for what the workflow adds to it).
 */
export const INLINE_ANSWER_BYTES = 200 * 1024;

/**
 * The runner's answer when it uploaded the outcome to `outcome_upload_url`: the object holds the
 * outcome's JSON text, `bytes` UTF-8 bytes long. Untrusted like any answer: whoever reads the
 * object parses it as a run outcome, with a size cap.
 */
export interface UploadedAnswer {
  outcome_uploaded: true;
  bytes: number;
}

/** What a function's Lambda answers: the run's outcome, or the marker of an uploaded one. */
export type LambdaRunAnswer = RunOutcome | UploadedAnswer;

/** Whether a function's answer is the marker of an uploaded outcome (`bytes` a non-negative integer). */
export function isUploadedAnswer(value: unknown): value is UploadedAnswer {
  if (typeof value !== "object" || value === null) return false;
  const { outcome_uploaded, bytes } = value as { outcome_uploaded?: unknown; bytes?: unknown };
  return outcome_uploaded === true && typeof bytes === "number" && Number.isSafeInteger(bytes) && bytes >= 0;
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
