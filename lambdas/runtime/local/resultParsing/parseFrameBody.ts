/**
 * What a result-parsing thread does with one frame (resultParser.ts): the work the frame reader
 * would do on the service's thread (depth scan, JSON.parse), and for a `done` frame what
 * parseRunOutcome and the run's redaction would (the result's JSON.parse, its secrets replaced).
 */
import type { FrameParse, ResultJsonVerdict } from "../../../runner/frames";
import { jsonTextDeeperThan } from "../../../runner/jsonDepth";
import { MAX_JSON_DEPTH, MAX_RESULT_BYTES } from "../../../runner/outputLimits";
import { Redactor } from "../../../secrets/redactor";

/** One frame's body to parse, for the run with these secret values. */
export interface ParseJob {
  id: number;
  body: Uint8Array;
  maxDepth: number;
  secrets: readonly string[];
}

export function parseFrameBody(body: Uint8Array, maxDepth: number, secrets: readonly string[]): FrameParse {
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8");
  if (jsonTextDeeperThan(text, maxDepth)) return { ok: false, problem: `a message is nested more than ${maxDepth} levels deep`, kind: "too_deep" };
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return { ok: false, problem: "a message is not JSON", kind: "not_json" };
  }
  const resultJson = checkResult(message, secrets);
  return resultJson === undefined ? { ok: true, message } : { ok: true, message, resultJson };
}

/**
 * A `done` frame's result, parsed (and redacted in place when the run had secrets), as
 * parseRunOutcome would: undefined where it would not parse it (no result, too big, too deep:
 * it tells those apart itself, cheaply).
 */
function checkResult(message: unknown, secrets: readonly string[]): ResultJsonVerdict | undefined {
  if (typeof message !== "object" || message === null || (message as { type?: unknown }).type !== "done") return undefined;
  const outcome = (message as { outcome?: unknown }).outcome;
  if (typeof outcome !== "object" || outcome === null || (outcome as { status?: unknown }).status !== "succeeded") return undefined;
  const json = (outcome as { result_json?: unknown }).result_json;
  if (typeof json !== "string" || Buffer.byteLength(json, "utf8") > MAX_RESULT_BYTES || jsonTextDeeperThan(json, MAX_JSON_DEPTH)) return undefined;
  try {
    JSON.parse(json);
  } catch {
    return "invalid";
  }
  const redactor = new Redactor(secrets);
  // The service redacts the result again (launchRun): a redacted result holds no value left to find, so that costs a scan.
  if (!redactor.empty) (outcome as { result_json: string }).result_json = redactor.json(json);
  return "valid";
}
