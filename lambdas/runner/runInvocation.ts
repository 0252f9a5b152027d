import { types } from "node:util";
import type { Browser } from "puppeteer-core";
import type { Browser as PlaywrightBrowser } from "playwright-core";
import type { ParameterInfo, ParameterStyle } from "../code/extractParameters";
import { type ArtifactSink, beginRun, endRun, type ProfileChannel } from "../../layers/runtime/runContext";
import type { RunProxy } from "../../layers/runtime/sessionProxy";
import { Redactor } from "../secrets/redactor";
import { htmlForms } from "../secrets/htmlForms";
import { EVIDENCE_LOG_BYTES, saveFailureEvidence } from "./failureEvidence";
import { mapAutomationStack } from "./automationStack";
import { captureConsole } from "./captureConsole";
import { explainAccessDenied } from "./accessDeniedHint";
import { explainClosedSession, sessionClosedCheck } from "./closedSessionHint";
import { type Automation, loadAutomation } from "./loadAutomation";
import { jsonTextDeeperThan } from "./jsonDepth";
import { MAX_JSON_DEPTH, MAX_RESULT_BYTES, resultTooDeep, resultTooLarge } from "./outputLimits";
import { MAX_LOG_BYTES, type ErrorCode, type RunOutcome } from "./protocol";
import { resetBrowser } from "./resetBrowser";
import type { PageOpened } from "../recording/pageTarget";
import type { RecordingMode } from "../recording/recordingMode";
import { startRunRecording } from "../recording/runRecording";
import type { OpenedPages } from "./drivers/openedPageGate";
import { browserWithinMemory, insufficientMemoryMessage } from "./browserMemory";

/** One invocation of a version's code. */
export interface Invocation {
  /** The version's compiled CommonJS code; evaluated once per distinct string. */
  code: string;
  /** Parameters by name, already validated against `variables`. */
  params: Record<string, unknown>;
  /** "positional": `fn(...variables in order)`; "object": `fn(params)`. */
  style: ParameterStyle;
  /** The version's parameters, in declaration order. */
  variables: ParameterInfo[];
  /** The worker's browser, connected on first use. */
  getBrowser: () => Promise<Browser>;
  /**
   * The function's memory_mb: below BROWSER_MIN_MEMORY_MB a session start is refused and the
   * run fails `insufficient_memory` (absent: never refused).
   */
  memoryMb?: number;
  /** The same browser through Playwright, connected on first use (absent: the Playwright driver is not available). */
  getPlaywright?: () => Promise<PlaywrightBrowser>;
  /** A Playwright connection of its own to that browser, per call (a script's `chromium.launch()`). */
  newPlaywright?: () => Promise<PlaywrightBrowser>;
  /** The function's timeout: sessions are closed before it passes. Not enforced here (the supervisor kills). */
  timeoutMs: number;
  /**
   * When set, the run is stopped if the automation has not returned after this many ms (at most
   * `timeoutMs`): the Lambda runner, which no supervisor stops in time to keep the logs. See
   * startInvocation.
   */
  stopAfterMs?: number;
  /** Where the run's artifacts go (`artifacts.save`, failure evidence); absent: the run keeps none. */
  artifacts?: ArtifactSink;
  /** Where the browser puts what pages download (kept as artifacts `download-<name>`). */
  downloadsDir?: string;
  /** Gets the console output as it is kept, line by line (a local worker streams it to the service). */
  onLog?: (text: string) => void;
  /** The function's secrets by name: `secrets.get` reads them, and their values are redacted from the outcome and the streamed logs. */
  secrets?: Readonly<Record<string, string>>;
  /** The function's `recording` setting (absent: off): which runs keep their pages' recordings. */
  recording?: RecordingMode;
  /**
   * The drivers' pipe to the run's browser (BrowserDrivers.openedPages): the recording holds and
   * records the pages the run's pages open (popups) on it. Absent: popups are not recorded.
   */
  openedPages?: () => Promise<OpenedPages>;
  /** Told of each page the run opens, besides the recording (the live view, see lambdas/live). */
  onPage?: PageOpened;
  /** The function's proxy for every session (Session.start({ proxy }) overrides it). */
  proxy?: RunProxy;
  /** Where sessions open and save profiles (absent: Session.start({ profile }) throws). */
  profiles?: ProfileChannel;
  /** The sandbox's host disposes the contexts the run leaves once it has answered (RunLimits.contextsDisposedAfterRun): the local worker. */
  contextsDisposedAfterRun?: boolean;
}

type Failure = { code: ErrorCode; message: string; stack?: string };
type Result = { ok: true; json: string } | { ok: false; error: Failure };

/**
 * The failure of a run whose automation threw `thrown`: its message (with the likely cause
 * first when a browser call outlived its session, see explainClosedSession, or the fix when it
 * wrote a file, see explainAccessDenied) and its stack,
 * with the frames of the user's code on the lines of the user's source (mapAutomationStack).
 */
function describeThrown(thrown: unknown, code: string, sessionClosed: boolean): Failure {
  if (types.isNativeError(thrown) || thrown instanceof Error) {
    const error: Failure = { code: "function_error", message: explainAccessDenied(thrown, explainClosedSession(thrown, sessionClosed)) };
    if (typeof thrown.stack === "string") error.stack = mapAutomationStack(thrown.stack, code);
    return error;
  }
  let message: string;
  try {
    message = String(thrown);
  } catch {
    message = "The function threw a value that cannot be shown as text";
  }
  return { code: "function_error", message };
}

function serialize(value: unknown): Result {
  const notSerializable = (reason: string): Result => ({
    ok: false,
    error: { code: "result_not_serializable", message: `The return value is not JSON-serializable: ${reason}` },
  });
  let json: string | undefined;
  try {
    json = JSON.stringify(value === undefined ? null : value);
  } catch (error) {
    // Nested so deeply that writing it out overflowed the stack: what the service refuses anyway.
    if (types.isNativeError(error) && /Maximum call stack/.test(error.message)) return { ok: false, error: resultTooDeep() };
    return notSerializable(types.isNativeError(error) ? error.message : String(error));
  }
  // JSON.stringify gives undefined for a function or a symbol at the top level.
  if (json === undefined) return notSerializable(`a ${typeof value} has no JSON form`);
  // Counted in UTF-16 units first: no string of up to a third of the cap can pass it in bytes.
  if (json.length * 3 > MAX_RESULT_BYTES) {
    const bytes = Buffer.byteLength(json, "utf8");
    if (bytes > MAX_RESULT_BYTES) return { ok: false, error: resultTooLarge(bytes) };
  }
  if (jsonTextDeeperThan(json, MAX_JSON_DEPTH)) return { ok: false, error: resultTooDeep() };
  return { ok: true, json };
}

function callArguments(invocation: Invocation): unknown[] {
  if (invocation.style === "object") return [invocation.params];
  // An absent parameter is passed as undefined, so the function's own default applies.
  return invocation.variables.map((variable) =>
    Object.hasOwn(invocation.params, variable.name) ? invocation.params[variable.name] : undefined,
  );
}

async function callAutomation(invocation: Invocation): Promise<Result> {
  let value: unknown;
  const sessionClosed = sessionClosedCheck();
  try {
    const fn: Automation = loadAutomation(invocation.code);
    value = await fn(...callArguments(invocation));
  } catch (thrown) {
    return { ok: false, error: describeThrown(thrown, invocation.code, sessionClosed()) };
  }
  return serialize(value);
}

/**
 * Runs one invocation in this process: loads the automation (cached per code string), calls
 * its default export with the parameters, captures console output (MAX_LOG_BYTES at most) and
 * turns the return value into JSON. Whatever happens, it then closes every session the run
 * left open and resets the browser it used, so the next run on this warm browser starts clean.
 * Never rejects for errors of the user's code: they become a failed outcome.
 */
export async function runInvocation(invocation: Invocation): Promise<RunOutcome> {
  const { outcome, settled } = startInvocation(invocation);
  await settled;
  return outcome;
}

/** The failure of a run stopped at its deadline: named for the function's timeout, as Lambda's own timeout is. */
function timedOut(timeoutMs: number): Result {
  return { ok: false, error: { code: "function_timeout", message: `The function did not finish within its timeout of ${timeoutMs / 1000} s` } };
}

/**
 * runInvocation in two steps: `outcome` is known once the automation returned and its
 * sessions are closed; `settled` once the browser is reset for the next run. A worker
 * answers with the outcome first and resets the browser before it takes the next run.
 *
 * With `stopAfterMs`, an automation still running then is abandoned: the outcome is a
 * `function_timeout` failure with the console output and browser time so far, its sessions
 * are closed and the console is given back, so the next run can begin. Its code is not
 * stopped (nothing in this process can stop a promise): what it does later happens outside
 * any run or in the next one (see lambdaHandler.ts).
 */
export function startInvocation(invocation: Invocation): { outcome: Promise<RunOutcome>; settled: Promise<void> } {
  let browser: Promise<Browser> | undefined;
  const memory = browserWithinMemory(invocation.memoryMb, invocation.getBrowser);
  const getBrowser = (): Promise<Browser> => (browser ??= memory.getBrowser());
  const limitMs = Math.min(invocation.timeoutMs, invocation.stopAfterMs ?? Number.POSITIVE_INFINITY);
  const outcome = (async (): Promise<RunOutcome> => {
    // Secret values never leave the run: each console line, the result and the error are redacted here (and again by the service).
    const redactor = new Redactor(Object.values(invocation.secrets ?? {}));
    // The evidence's lines of a failed run have room of their own, kept after any amount of output.
    const capture = captureConsole(MAX_LOG_BYTES, invocation.onLog, (line) => redactor.text(line), EVIDENCE_LOG_BYTES);
    let result: Result;
    let browser_ms = 0;
    let timer: NodeJS.Timeout | undefined;
    const recording = startRunRecording(invocation.recording ?? "off", (line) => capture.note(line), invocation.openedPages);
    const onPage = invocation.onPage;
    try {
      beginRun({
        pageOpened: async (page) => {
          await recording.pageOpened(page);
          await onPage?.(page);
        },
        // Under `all` only: a take starts a page's recorder where it had not begun, a cost every
        // mid-run close() would pay under `failures` for a recording a succeeding run drops.
        ...(invocation.recording === "all" ? { beforeContextClose: () => recording.takeOpen() } : {}),
        getBrowser,
        ...(invocation.getPlaywright ? { getPlaywright: invocation.getPlaywright } : {}),
        ...(invocation.newPlaywright ? { newPlaywright: invocation.newPlaywright } : {}),
        deadline: Date.now() + limitMs,
        ...(invocation.artifacts ? { artifacts: invocation.artifacts } : {}),
        ...(invocation.downloadsDir ? { downloadsDir: invocation.downloadsDir } : {}),
        ...(invocation.secrets ? { secrets: invocation.secrets } : {}),
        ...(invocation.proxy ? { proxy: invocation.proxy } : {}),
        ...(invocation.profiles ? { profiles: invocation.profiles } : {}),
        ...(invocation.contextsDisposedAfterRun ? { contextsDisposedAfterRun: true } : {}),
      });
      try {
        const called = callAutomation(invocation);
        if (invocation.stopAfterMs === undefined) {
          result = await called;
        } else {
          const deadline = new Promise<Result>((resolve) => (timer = setTimeout(() => resolve(timedOut(invocation.timeoutMs)), limitMs)));
          result = await Promise.race([called, deadline]);
        }
        // A browser refused for the function's memory is why the run failed, whatever the code made of it.
        if (!result.ok && memory.refused()) result = { ok: false, error: { code: "insufficient_memory", message: insufficientMemoryMessage(invocation.memoryMb ?? 0) } };
        // A failure with pages open keeps what they showed (screenshots, HTML) before they close.
        if (!result.ok && invocation.artifacts && result.error.code !== "result_too_large") {
          const htmlRedactor = new Redactor(Object.values(invocation.secrets ?? {}).flatMap(htmlForms));
          await saveFailureEvidence(invocation.artifacts, undefined, (html) => htmlRedactor.text(html), (line) => capture.note(line));
        }
        await recording.keep(result.ok, invocation.artifacts, (json) => redactor.json(json));
      } finally {
        clearTimeout(timer);
        recording.close();
        browser_ms = (await endRun()).browser_ms;
      }
    } finally {
      capture.restore();
    }
    const logs = capture.text();
    return result.ok
      ? { status: "succeeded", result_json: redactor.json(result.json), logs, browser_ms }
      : { status: "failed", error: redactFailure(redactor, result.error), logs, browser_ms };
  })();
  // Only a browser this run used can hold its leftovers; a run without sessions never connects.
  // (Where the host disposes them after the answer, nothing of it is sent from here: see contextsDisposedAfterRun.)
  const settled = outcome.then(
    () => (browser && !invocation.contextsDisposedAfterRun ? browser.then(resetBrowser, () => undefined) : undefined),
    () => undefined,
  );
  return { outcome, settled };
}

/** A failure with the function's secret values out of its message and stack. */
function redactFailure(redactor: Redactor, failure: Failure): Failure {
  if (redactor.empty) return failure;
  const message = redactor.text(failure.message);
  return failure.stack === undefined ? { code: failure.code, message } : { code: failure.code, message, stack: redactor.text(failure.stack) };
}
