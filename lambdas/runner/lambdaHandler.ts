/**
 * The handler of every function's Lambda. It ships in the runtime layer, bundled by
 * buildLambdaRunnerBundle into `/opt/nodejs/browserfn-runner.cjs`; each function's zip holds
 * only its code and a one-line `index.js` that calls createLambdaHandler (lambdaFunctionIndex;
 * the layer path contract is in lambdaPackage.ts).
 */
import { DecryptCommand, KMSClient } from "@aws-sdk/client-kms";
import { RUNNER_CONTEXT_KEY, secretContext } from "../secrets/secretContexts";
import { isRunSecretsEnvelope, openWithDataKey, runDataKeyContext } from "../secrets/runEnvelope/envelopeFormat";
import { proxyOf, proxyServerProblem } from "../proxy/proxySettings";
import { runProxyOf } from "../proxy/runProxy";
import type { RunProxy } from "../../layers/runtime/sessionProxy";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser } from "puppeteer-core";
import { driversOf, launchLambdaChromium, warmBrowser } from "./lambdaBrowser";
import { preloadPlaywrightFor } from "./drivers/usesPlaywright";
import { browserKillWatch, outOfMemory } from "./browserKills";
import { type FunctionMeta, INLINE_ANSWER_BYTES, type LambdaRunAnswer, type LambdaRunEvent, isRunProfileGrants, isRunUploads, RUNNER_PROTOCOL, type RunUploads, type UploadedAnswer } from "./lambdaPackage";
import { capBytes } from "./outputLimits";
import type { RunOutcome } from "./protocol";
import { TreeMeter, watchMemory } from "../runtime/local/processTree";
import { startInvocation } from "./runInvocation";
import { isRecordingMode } from "../recording/recordingMode";
import { postToS3, s3ArtifactSink } from "./s3Artifacts";
import { s3Profiles } from "./s3Profiles";
import { isLiveUploads } from "../live/aws/liveUploads";
import { startLambdaLiveView } from "../live/aws/lambdaLiveView";
import { realmChanges, takeRealmSnapshot } from "./realmLeftovers/realmSnapshot";

export { type FunctionMeta, type LambdaRunAnswer, type LambdaRunEvent, lambdaFunctionIndex, RUNNER_LAYER_PATH } from "./lambdaPackage";
import type { SealedSecrets } from "./lambdaPackage";

export interface LambdaHandlerOptions {
  /** How the container's browser is launched (default: @sparticuz/chromium from the chromium layer). */
  launchBrowser?: () => Promise<Browser>;
  /** The KMS client the function's secrets are opened with (default: the SDK's, with the Lambda's own credentials). */
  kms?: { send(command: DecryptCommand): Promise<{ Plaintext?: Uint8Array }> };
  /**
   * Called once when a run left the realm changed (see realmSnapshot), with what changed; the
   * handler then refuses every later invocation. Default: in Lambda (AWS_LAMBDA_RUNTIME_API is
   * set), the process exits once the answer is out, so Lambda starts a new execution environment
   * for the next invocation; elsewhere nothing more than the refusal.
   */
  onLeftovers?: (changes: string[]) => void;
  /**
   * The function's memory (MB): a session start below BROWSER_MIN_MEMORY_MB is refused with
   * `insufficient_memory`. Default: Lambda's AWS_LAMBDA_FUNCTION_MEMORY_SIZE (none: not refused).
   */
  memoryMb?: number;
}

/** Lambda's memory setting of this function, as its environment says (undefined when it does not). */
export function lambdaMemoryMb(env: NodeJS.ProcessEnv): number | undefined {
  const mb = Number(env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE);
  return Number.isSafeInteger(mb) && mb > 0 ? mb : undefined;
}

/**
 * Ends the container's process after the current answer: the Node runtime interface client posts
 * a handler's answer in the continuation of its promise, before the next turn of the event
 * loop, where this exit runs; Lambda then replaces the execution environment.
 */
function exitAfterAnswer(): void {
  setImmediate(() => process.exit(0));
}

/** What the handler uses of Lambda's context object. */
export interface LambdaContext {
  getRemainingTimeInMillis(): number;
}

/** How often a run's memory is sampled (the Node process and its browser): its peak is reported with the outcome. */
const MEMORY_SAMPLE_MS = 100;

/**
 * The time kept between a run's deadline and Lambda's own timeout: enough to close the run's
 * sessions, measure its memory and upload its outcome, so a run Lambda would kill ends with
 * its logs instead.
 */
export const DEADLINE_MARGIN_MS = 3000;
/** The least time a run is given, however little Lambda leaves (it then may be killed by Lambda). */
export const MIN_RUN_MS = 1000;
/** The longest an outcome's upload may take, whatever time is left. */
export const MAX_UPLOAD_MS = 60_000;
/** Time kept after an upload for the answer itself. */
const UPLOAD_MARGIN_MS = 500;
/** How much of an upload's failure (the error, or the start of S3's answer) the answer keeps. */
const MAX_REASON_CHARS = 300;
/** How much of a failure's message an answer cut to fit keeps (what parseRunOutcome keeps too). */
const MAX_MESSAGE_CHARS = 4096;

/** A function's Lambda handler; `close()` closes its browser (for tests; Lambda just freezes the container). */
export type LambdaRunHandler = ((event: LambdaRunEvent, context?: LambdaContext) => Promise<LambdaRunAnswer>) & { close(): Promise<void> };

async function loadCode(codeDir: string): Promise<{ js: string; meta: FunctionMeta }> {
  const js = await readFile(path.join(codeDir, "code.cjs"), "utf8");
  const meta = JSON.parse(await readFile(path.join(codeDir, "meta.json"), "utf8")) as FunctionMeta;
  if (meta.parameter_style !== "positional" && meta.parameter_style !== "object") {
    throw new Error("meta.json has no valid parameter_style");
  }
  if (!Array.isArray(meta.variables)) throw new Error("meta.json has no variables");
  return { js, meta };
}

/** The run's proxy: the event's setting (checked as the service checks it) with the password from the secrets this Lambda opened. */
function lambdaProxy(event: LambdaRunEvent, secrets: Record<string, string>): { proxy?: RunProxy } {
  const setting = event.proxy ? proxyOf({ proxy: event.proxy }) : null;
  if (!setting || proxyServerProblem(setting.server)) return {};
  const proxy = runProxyOf(setting, secrets);
  return proxy ? { proxy } : {};
}

function checkEvent(event: LambdaRunEvent): void {
  const valid =
    typeof event?.run_id === "string" &&
    typeof event.params === "object" &&
    event.params !== null &&
    !Array.isArray(event.params) &&
    typeof event.timeout_ms === "number" &&
    event.timeout_ms > 0 &&
    (event.uploads === undefined || isRunUploads(event.uploads)) &&
    (event.secrets === undefined || isSealedSecrets(event.secrets)) &&
    (event.profiles === undefined || isRunProfileGrants(event.profiles));
  if (!valid) throw new Error("The event must be { run_id: string, params: object, timeout_ms: number, uploads?: {url, fields, outcome, artifacts}, secrets?: {function_id, runner, items}, profiles?: [{name, get, put, locked}] }");
}


function isSealedSecrets(secrets: SealedSecrets): boolean {
  return (
    typeof secrets === "object" &&
    secrets !== null &&
    typeof secrets.function_id === "string" &&
    typeof secrets.runner === "string" &&
    Array.isArray(secrets.items) &&
    secrets.items.every((item) => typeof item?.name === "string" && typeof item.sealed === "string") &&
    (secrets.envelope === undefined || isRunSecretsEnvelope(secrets.envelope))
  );
}

/**
 * Opens the run's secrets with KMS: each with its context `{function_id, secret, runner}`,
 * which the function's role may decrypt only when `runner` is its own session (lib/secretsKey.ts).
 */
async function openSecrets(kmsClient: () => NonNullable<LambdaHandlerOptions["kms"]>, secrets: SealedSecrets | undefined): Promise<Record<string, string>> {
  if (!secrets || secrets.items.length === 0) return {};
  const kms = kmsClient();
  if (secrets.envelope) {
    // One Decrypt for the run's data key (its context names this Lambda's session), then each value with it; the key is not kept.
    const { envelope } = secrets;
    const { Plaintext } = await kms.send(
      new DecryptCommand({ CiphertextBlob: Buffer.from(envelope.data_key, "base64"), EncryptionContext: runDataKeyContext(secrets.function_id, secrets.runner) }),
    );
    if (!Plaintext) throw new Error("KMS answered Decrypt of the run's data key without a plaintext");
    try {
      return Object.fromEntries(envelope.items.map(({ name, sealed }) => [name, openWithDataKey(Plaintext, secrets.function_id, name, sealed)] as const));
    } finally {
      Plaintext.fill(0);
    }
  }
  const opened = await Promise.all(
    secrets.items.map(async ({ name, sealed }) => {
      // The context the service sealed it with (kmsSecretBox.ts): the secret's own, and this Lambda's session.
      const context = { ...secretContext(secrets.function_id, name), [RUNNER_CONTEXT_KEY]: secrets.runner };
      const { Plaintext } = await kms.send(new DecryptCommand({ CiphertextBlob: Buffer.from(sealed, "base64"), EncryptionContext: context }));
      return [name, Buffer.from(Plaintext ?? new Uint8Array()).toString("utf8")] as const;
    }),
  );
  return Object.fromEntries(opened);
}

/**
 * Creates the handler of the function whose code is in `codeDir` (`code.cjs`, the version's
 * compiled CommonJS, and `meta.json`, see FunctionMeta). The code is read once per container;
 * the browser is launched when a run first needs it and stays warm for the next invocations.
 *
 * Each invocation runs the automation with startInvocation and answers its RunOutcome: errors
 * of the user's code are a `failed` outcome, never a thrown error. The outcome carries the peak
 * memory of this process and its browser, sampled every MEMORY_SAMPLE_MS while the run goes on
 * (Lambda's own "Max Memory Used" reaches only its logs). Only a broken deployment (no
 * code, a bad event) throws, which Lambda reports as a FunctionError. The outcome is answered
 * as soon as the automation's sessions are closed (see answerFor: a big one is uploaded to the
 * event's `uploads` outcome form); the browser is reset for the next run afterwards, and the next
 * invocation waits for that reset first (Lambda may freeze the container in between; the reset
 * then finishes when it thaws).
 *
 * The run is stopped at its deadline: the function's timeout (`timeout_ms`), or earlier when
 * Lambda's context leaves less than that plus DEADLINE_MARGIN_MS (never less than MIN_RUN_MS).
 * A stopped run answers `function_timeout` with its logs and browser time so far, and the
 * container's browser is then closed (launched again by the next run that needs one), so no
 * page, context or Browser object the abandoned code holds reaches the next run. A synchronous
 * loop blocks the process, so Lambda's own timeout ends the invocation (without logs) and the
 * container.
 *
 * After each run the realm is compared with a snapshot taken before any user code
 * (realmSnapshot: globals, builtins and their prototypes, process.env, the automation's timers,
 * unref'd too). A run that left anything of it changed has its answer sent, and then the
 * container is retired (`onLeftovers`: in Lambda the process exits, so Lambda replaces it) and
 * refuses any later invocation: no caller's run sees what another's left. What the comparison
 * cannot see: state in the module's own scope (kept across warm invocations, as on any Lambda)
 * and promises still pending.
 *
 * Unlike a local worker, an unhandled promise rejection in user code ends the invocation:
 * the Lambda Node runtime reports it as an error and restarts the runtime process.
 */
export function createLambdaHandler(codeDir: string, options: LambdaHandlerOptions = {}): LambdaRunHandler {
  // Code that uses Playwright has it loaded first: what loading it changes is the runtime's, not a run's.
  preloadPlaywrightFor(codeDir);
  // The realm as no run has touched it: a run that leaves it otherwise retires the container.
  const realm = takeRealmSnapshot();
  const onLeftovers = options.onLeftovers ?? (process.env.AWS_LAMBDA_RUNTIME_API ? exitAfterAnswer : () => undefined);
  let leftovers: string[] | undefined;
  const browser = warmBrowser(options.launchBrowser ?? launchLambdaChromium);
  let code: Promise<{ js: string; meta: FunctionMeta }> | undefined;
  // The previous run's browser reset: each run starts after it (Lambda sends one event at a
  // time per container; this keeps that true for any other caller too).
  let previous: Promise<void> = Promise.resolve();
  let kms: NonNullable<LambdaHandlerOptions["kms"]> | undefined;
  // The process and its browser, for the container's life: exact reads spread over its runs (TreeMeter).
  const meter = new TreeMeter(process.pid);
  const memoryMb = options.memoryMb ?? lambdaMemoryMb(process.env);
  const kills = browserKillWatch();

  const handler = async (event: LambdaRunEvent, context?: LambdaContext): Promise<LambdaRunAnswer> => {
    checkEvent(event);
    // Lambda's end of this invocation, read once: the run's deadline and the upload's come before it.
    const remainingMs = context?.getRemainingTimeInMillis();
    const lambdaEnd = typeof remainingMs === "number" && Number.isFinite(remainingMs) ? Date.now() + remainingMs : Number.POSITIVE_INFINITY;
    if (!code) {
      code = loadCode(codeDir);
      code.catch(() => (code = undefined)); // a failed read is tried again by the next invocation
    }
    const { js, meta } = await code;
    const { params, timeout_ms: timeoutMs } = event;
    // A secret that cannot be opened is the deployment's fault (the key's grants): the invocation fails, the workflow records it.
    // The client is made only for a run that has secrets (the SDK's start-up warnings then land in no run's logs).
    const secrets = await openSecrets(() => (kms ??= options.kms ?? new KMSClient({})), event.secrets);
    const getBrowser = () => browser.get().then(kills.watch);
    // Playwright on the same warm browser, over its pipe (a browser launched otherwise has none).
    const playwrightDrivers = async () => {
      const drivers = driversOf(await browser.get());
      if (!drivers) throw new Error("Playwright is not available with this runner's browser");
      return drivers;
    };
    const run = previous.then(() => {
      // Checked once the previous run has settled (its leftovers are known by then).
      if (leftovers) throw new Error(`This container serves no more runs: an earlier run left its realm changed (${leftovers.slice(0, 5).join("; ")})`);
      const stopAfterMs = Math.min(timeoutMs, Math.max(MIN_RUN_MS, lambdaEnd - DEADLINE_MARGIN_MS - Date.now()));
      const memory = watchMemory(() => meter.sample(), MEMORY_SAMPLE_MS);
      void memory.sample(); // from the start: a short run gets a measure too
      const artifacts = event.uploads ? s3ArtifactSink(event.uploads, event.artifacts_url ?? "") : undefined;
      // The profiles the trusted side granted this run (presigned URLs; lambdas/profiles/aws).
      const profiles = event.profiles ? s3Profiles(event.profiles) : undefined;
      // The live view: screencast only while the run's watch marker says someone watches (lambdas/live/aws).
      const live = isLiveUploads(event.uploads?.live) ? startLambdaLiveView(event.uploads.live) : undefined;
      const runStarted = Date.now();
      const started = stopLiveIfThrows(live, () => startInvocation({
        code: js,
        params,
        style: meta.parameter_style,
        variables: meta.variables,
        getBrowser,
        ...(memoryMb === undefined ? {} : { memoryMb }),
        getPlaywright: async () => (await playwrightDrivers()).getPlaywright(),
        newPlaywright: async () => (await playwrightDrivers()).newPlaywright(),
        openedPages: async () => (await playwrightDrivers()).openedPages(),
        timeoutMs,
        stopAfterMs,
        ...(artifacts ? { artifacts, downloadsDir: path.join(tmpdir(), "browserfn-downloads") } : {}),
        secrets,
        ...(isRecordingMode(event.recording) ? { recording: event.recording } : {}),
        ...lambdaProxy(event, secrets),
        ...(profiles ? { profiles } : {}),
        ...(live ? { onPage: live.pageOpened } : {}),
      }));
      const outcome = started.outcome.then(
        async (ended): Promise<RunOutcome> => {
          memory.stop();
          live?.stop();
          await memory.sample();
          // Chromium killed by the out-of-memory killer: the run ran out of memory, whatever its code made of it (a timeout, a closed target).
          if (ended.status === "failed" && (await kills.killedSince(runStarted))) ended = outOfMemory(ended, memoryMb);
          const tooLarge = profiles?.tooLarge() ?? [];
          return { ...ended, peak_memory_mb: Math.round(memory.peak), ...(artifacts ? { artifacts: artifacts.names() } : {}), ...(tooLarge.length > 0 ? { profiles_too_large: tooLarge } : {}) };
        },
        (error: unknown) => {
          memory.stop();
          live?.stop();
          throw error;
        },
      );
      // An abandoned run's code may still hold the browser: the next run gets a new one.
      const abandoned = outcome.then(isTimedOut, () => false);
      const settled = started.settled
        .then(async () => {
          if (await abandoned) await browser.close();
          // What the run left in the realm (patched builtins, globals, timers): no later run may see it.
          const changes = realmChanges(realm);
          if (changes.length > 0 && !leftovers) {
            leftovers = changes;
            onLeftovers(changes);
          }
        })
        .catch(() => undefined); // never rejects: the next run waits for it
      return { outcome, settled };
    });
    previous = run.then((started) => started.settled, () => undefined); // a refused run settles nothing
    const outcome = await (await run).outcome;
    return answerFor(outcome, { uploads: event.uploads, timeLeftMs: lambdaEnd - Date.now() - UPLOAD_MARGIN_MS });
  };
  return Object.assign(handler, {
    async close() {
      await previous;
      await browser.close();
    },
  });
}


/** `start()`, with the run's live view stopped if it throws (no timer of a run that never started lives on). */
function stopLiveIfThrows<T>(live: { stop(): void } | undefined, start: () => T): T {
  try {
    return start();
  } catch (error) {
    live?.stop();
    throw error;
  }
}

function isTimedOut(outcome: RunOutcome): boolean {
  return outcome.status === "failed" && outcome.error.code === "function_timeout";
}

/** Where and how long a big outcome may be uploaded. */
export interface UploadTarget {
  /** The event's `uploads`, if any: the outcome goes to their `outcome` form. */
  uploads: RunUploads | undefined;
  /** The time left before the answer must be sent (capped at MAX_UPLOAD_MS). */
  timeLeftMs: number;
}

/**
 * What the handler answers for `outcome`, marked with RUNNER_PROTOCOL: the outcome itself when
 * that answer's JSON is at most INLINE_ANSWER_BYTES; otherwise the outcome's JSON text is POSTed
 * to the uploads' outcome form (Content-Type application/json, within the time left; S3 refuses
 * it past MAX_UPLOADED_OUTCOME_BYTES) and the answer is `{ outcome_uploaded: true, bytes }`.
 * With no uploads, no time left, or a failed upload (a network error, a timeout, a status other
 * than 2xx), the answer is the outcome cut to fit (see fitInline). Never rejects; never answers
 * more than INLINE_ANSWER_BYTES.
 */
export async function answerFor(outcome: RunOutcome, target: UploadTarget): Promise<LambdaRunAnswer> {
  const inline = withProtocol(outcome);
  if (Buffer.byteLength(JSON.stringify(inline), "utf8") <= INLINE_ANSWER_BYTES) return inline;
  const json = JSON.stringify(outcome);
  const bytes = Buffer.byteLength(json, "utf8");
  const problem = await upload(json, target);
  if (problem === undefined) return withProtocol({ outcome_uploaded: true, bytes } satisfies UploadedAnswer);
  return withProtocol(fitInline(outcome, `The run's outcome is ${describeBytes(bytes)} of JSON, over the ${INLINE_ANSWER_BYTES / 1024} KB a function's answer can carry, and it could not be uploaded: ${problem}`));
}

/** An answer marked with the protocol this runner speaks (the recorder refuses protocols it does not know). */
function withProtocol(answer: RunOutcome | UploadedAnswer): LambdaRunAnswer {
  return Object.assign({}, answer, { runner_protocol: RUNNER_PROTOCOL });
}

/** POSTs `json` to the target's outcome form; why it failed, or undefined once the upload succeeded. */
async function upload(json: string, { uploads, timeLeftMs }: UploadTarget): Promise<string | undefined> {
  if (uploads === undefined) return "the run's event has no uploads";
  const timeoutMs = Math.min(MAX_UPLOAD_MS, Math.floor(timeLeftMs));
  if (!(timeoutMs > 0)) return "no time was left to upload it";
  try {
    const { key, policy, signature } = uploads.outcome;
    const data = Buffer.from(json, "utf8");
    const response = await postToS3(uploads, { key, policy, signature, contentType: "application/json", data, fileName: "outcome.json" }, timeoutMs);
    const text = await response.text().catch(() => "");
    if (response.ok) return undefined;
    return shorten(`the upload answered HTTP ${response.status}${text ? `: ${text}` : ""}`);
  } catch (error) {
    if (errorField(error, "name") === "TimeoutError") return `the upload did not finish within ${timeoutMs} ms`;
    // fetch's own message is "fetch failed"; its cause says why (ECONNREFUSED, a TLS error, …).
    const cause = errorField(errorField(error, "cause"), "message");
    const message = errorField(error, "message");
    return shorten(`the upload failed: ${typeof message === "string" ? message : String(error)}${typeof cause === "string" ? ` (${cause})` : ""}`);
  }
}

/** A field of a thrown value, read without `instanceof` (fetch's errors may come from another realm). */
function errorField(error: unknown, field: "name" | "message" | "cause"): unknown {
  return typeof error === "object" && error !== null ? (error as Record<string, unknown>)[field] : undefined;
}

/**
 * A failed outcome built from `outcome`'s named fields that fits INLINE_ANSWER_BYTES: a
 * succeeded one becomes `result_too_large` with `why` as its message; a failed one keeps its
 * error code and message (cut to MAX_MESSAGE_CHARS) without its stack. The logs are halved until
 * the answer fits (they are under INLINE_ANSWER_BYTES, but escaping can make them longer).
 */
function fitInline(outcome: RunOutcome, why: string): RunOutcome {
  const error =
    outcome.status === "failed"
      ? { code: outcome.error.code, message: outcome.error.message.slice(0, MAX_MESSAGE_CHARS) }
      : { code: "result_too_large" as const, message: why };
  let logs = outcome.logs;
  for (;;) {
    const answer: RunOutcome = { status: "failed", error, logs, browser_ms: outcome.browser_ms };
    if (outcome.peak_memory_mb !== undefined) answer.peak_memory_mb = outcome.peak_memory_mb;
    if (Buffer.byteLength(JSON.stringify(withProtocol(answer)), "utf8") <= INLINE_ANSWER_BYTES || logs === "") return answer;
    logs = capBytes(logs, Math.floor(Buffer.byteLength(logs, "utf8") / 2));
  }
}

function shorten(text: string): string {
  return text.length > MAX_REASON_CHARS ? `${text.slice(0, MAX_REASON_CHARS)}…` : text;
}

function describeBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : `${Math.ceil(bytes / 1024)} KB`;
}
