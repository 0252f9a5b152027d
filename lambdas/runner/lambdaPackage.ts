import type { RunSecretsEnvelope } from "../secrets/runEnvelope/envelopeFormat";
import type { ProxySettings } from "../proxy/proxySettings";
/**
 * What the AWS runtime adapter and the Lambda runner (lambdaHandler.ts) agree on: the files
 * of a function's zip, the event it is invoked with, and where the runner lives. Free of heavy
 * imports, so the API's Lambdas can build packages without bundling puppeteer-core.
 */
import type { RecordingMode } from "../recording/recordingMode";
import type { LiveUploads } from "../live/aws/liveUploads";
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
   * Every object the run may write to S3 (RunUploads): its outcome, when its JSON is over
   * INLINE_ANSWER_BYTES (the runner then answers an UploadedAnswer; without uploads such an
   * outcome becomes a small failed one), and its artifacts (without uploads a run keeps none).
   */
  uploads?: RunUploads;
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
  /**
   * The profiles this run may open (lambdas/profiles/aws): each with a presigned GET of its
   * current state and, when the run holds its writer's lease, a presigned POST for its new
   * state. A name not listed here cannot be opened (absent: none can).
   */
  profiles?: RunProfileGrant[];
}

/**
 * One profile a run may open on AWS. The run holds no S3 or KMS permission: both URLs act with
 * their signer's, for one exact object each (the POST caps its size at 50 MB and demands SSE-KMS).
 */
export interface RunProfileGrant {
  name: string;
  /** A GET URL of its current state; null when it has none yet (the session opens empty). */
  get: string | null;
  /** The POST form its new state is written with (a new object, adopted by the recorder if the run succeeds); null: this run may not write it. */
  put: { url: string; fields: Record<string, string> } | null;
  /** Another run held its writer's lease when this run started: a `persist` session throws ProfileLockedError. */
  locked: boolean;
}

/** Whether an event's `profiles` has the shape of RunProfileGrant[] (the runner checks its event). */
export function isRunProfileGrants(grants: unknown): grants is RunProfileGrant[] {
  const text = (value: unknown) => typeof value === "string";
  return (
    Array.isArray(grants) &&
    grants.every(
      (grant: Partial<RunProfileGrant> | null) =>
        typeof grant === "object" &&
        grant !== null &&
        text(grant.name) &&
        (grant.get === null || text(grant.get)) &&
        typeof grant.locked === "boolean" &&
        (grant.put === null ||
          (typeof grant.put === "object" && text(grant.put?.url) && typeof grant.put?.fields === "object" && grant.put.fields !== null && Object.values(grant.put.fields).every(text))),
    )
  );
}

/**
 * Presigned S3 POSTs for one run (outcomeBucket.ts signs them; the function's role holds no S3
 * permission): each policy names one exact key and caps its size, so a run can write at most
 * one outcome and `artifacts.signatures.length` artifact objects, each within its cap, all under
 * the run's own prefix, which the recorder deletes at the run's end.
 *
 * A form is `fields`, then `Policy` and `X-Amz-Signature`, `key`, `Content-Type` and `file`.
 * The artifact slots share one policy text: slot i's is `policy_template` with ARTIFACT_SLOT
 * replaced by i, base64-encoded, and its signature is `signatures[i]` (so a hundred slots cost a
 * few KB of the event, not a hundred policies).
 */
export interface RunUploads {
  url: string;
  fields: Record<string, string>;
  outcome: { key: string; policy: string; signature: string };
  artifacts: { key_prefix: string; policy_template: string; signatures: string[] };
  /** The live view's frame POST and watch-marker HEAD (lambdas/live/aws/liveUploads.ts); absent: no live view. */
  live?: LiveUploads;
}

/** Whether an event's `uploads` has the shape of RunUploads (the runner checks its event). */
export function isRunUploads(uploads: RunUploads): boolean {
  const text = (value: unknown) => typeof value === "string";
  return (
    typeof uploads === "object" &&
    uploads !== null &&
    text(uploads.url) &&
    typeof uploads.fields === "object" &&
    uploads.fields !== null &&
    Object.values(uploads.fields).every(text) &&
    text(uploads.outcome?.key) &&
    text(uploads.outcome.policy) &&
    text(uploads.outcome.signature) &&
    text(uploads.artifacts?.key_prefix) &&
    text(uploads.artifacts.policy_template) &&
    Array.isArray(uploads.artifacts.signatures) &&
    uploads.artifacts.signatures.every(text)
  );
}

/** Where a slot's number goes in the artifact policy template (and after `key_prefix` in its key). */
export const ARTIFACT_SLOT = "{slot}";

/** Slot `slot`'s policy as its form carries it: the template with the slot's number, base64-encoded. */
export function slotPolicy(template: string, slot: number): string {
  return Buffer.from(template.split(ARTIFACT_SLOT).join(String(slot)), "utf8").toString("base64");
}

/** A function's secrets as its run's event carries them. */
export interface SealedSecrets {
  function_id: string;
  runner: string;
  /** Each secret sealed by KMS on its own (one Decrypt each: what runners before the envelope open). */
  items: { name: string; sealed: string }[];
  /** The same values under one data key (one Decrypt per run: lambdas/secrets/runEnvelope); opened instead of `items` when present. */
  envelope?: RunSecretsEnvelope;
}

/**
 * The most UTF-8 bytes of JSON the runner answers with: the answer passes through Step
 * Functions, whose state holds 256 KB at most (with room for what the workflow adds to it).
 */
export const INLINE_ANSWER_BYTES = 200 * 1024;

/**
 * The runner's answer when it uploaded the outcome through the event's `uploads` outcome form: the object holds the
 * outcome's JSON text, `bytes` UTF-8 bytes long. Untrusted like any answer: whoever reads the
 * object parses it as a run outcome, with a size cap.
 */
export interface UploadedAnswer {
  outcome_uploaded: true;
  bytes: number;
}

/** What a function's Lambda answers: the run's outcome, or the marker of an uploaded one, with the runner's protocol (RUNNER_PROTOCOL). */
export type LambdaRunAnswer = (RunOutcome | UploadedAnswer) & { runner_protocol?: number };

/** Whether a function's answer is the marker of an uploaded outcome (`bytes` a non-negative integer). */
export function isUploadedAnswer(value: unknown): value is UploadedAnswer {
  if (typeof value !== "object" || value === null) return false;
  const { outcome_uploaded, bytes } = value as { outcome_uploaded?: unknown; bytes?: unknown };
  return outcome_uploaded === true && typeof bytes === "number" && Number.isSafeInteger(bytes) && bytes >= 0;
}

/**
 * The protocol this runner speaks with the recorder: the event it reads (this file's
 * LambdaRunEvent) and the answer it gives (`runner_protocol` in every answer). Raised whenever
 * either changes in a way an older side would misread.
 * - 1: runners before the field (they send none), with one artifact POST for any key under the run's prefix;
 * - 2: artifact uploads through numbered slots and the outcome through a size-capped POST (outcomeBucket.ts).
 */
export const RUNNER_PROTOCOL = 2;

/**
 * The runner protocols the recorder accepts, oldest first: the current one and the one before,
 * so runs of versions published before a stack update keep working while the runner rollout
 * (runnerRollout.ts) moves every function's live version to the new runner layer. An answer
 * of any other protocol ends its run `function_crashed`.
 */
export const ACCEPTED_RUNNER_PROTOCOLS: readonly number[] = [RUNNER_PROTOCOL - 1, RUNNER_PROTOCOL];

/** The protocol an answer says it speaks: its `runner_protocol`, 1 when it names none (runners before the field), null when it is not a small integer. */
export function runnerProtocolOf(answer: unknown): number | null {
  if (typeof answer !== "object" || answer === null) return 1;
  const sent = (answer as { runner_protocol?: unknown }).runner_protocol;
  if (sent === undefined) return 1;
  return typeof sent === "number" && Number.isSafeInteger(sent) && sent >= 0 && sent < 1_000_000 ? sent : null;
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
