/**
 * What a run reports about itself, parsed as untrusted input (shared/DESIGN.md, "Trust
 * boundaries"): a local worker's `done` message and a function Lambda's answer both pass
 * through `parseRunOutcome` before anything of them reaches a record. The result is a
 * RunOutcome with named fields only, every string capped; nothing else of the input survives.
 */
import { z } from "zod";
import type { RunOutcome } from "./protocol";

/** A result is kept inline up to this many bytes of JSON (Lambda's synchronous answer limit). */
export const MAX_RESULT_BYTES = 6 * 1024 * 1024;
/** Console output kept per run; the rest is cut with a note. */
export const MAX_LOG_BYTES = 64 * 1024;
const MAX_MESSAGE_CHARS = 4096;
const MAX_STACK_CHARS = 16_384;
const TRUNCATED = "…[truncated]";

/** The error codes a run may report about itself; anything else is the service's to say. */
export const RUN_ERROR_CODES = ["function_error", "result_not_serializable", "result_too_large"] as const;

const capped = (max: number) => z.string().transform((text) => (text.length > max ? `${text.slice(0, max)}${TRUNCATED}` : text));
const logs = z.string().transform((text) => capBytes(text, MAX_LOG_BYTES));
const browserMs = z.number().finite().nonnegative().transform(Math.round);
const error = z.object({ code: z.enum(RUN_ERROR_CODES), message: capped(MAX_MESSAGE_CHARS), stack: capped(MAX_STACK_CHARS).optional() });

const outcomeSchema = z.discriminatedUnion("status", [
  z.object({ status: z.literal("succeeded"), result_json: z.string(), logs, browser_ms: browserMs }),
  z.object({ status: z.literal("failed"), error, logs, browser_ms: browserMs }),
]);

/** The longest prefix of `text` within `bytes` UTF-8 bytes, with a note when it was cut. */
export function capBytes(text: string, bytes: number): string {
  if (Buffer.byteLength(text, "utf8") <= bytes) return text;
  const note = "…[output truncated]\n";
  // Cut on a character boundary: decoding a cut buffer could end in half a character.
  let end = Math.min(text.length, bytes - note.length);
  while (end > 0 && Buffer.byteLength(text.slice(0, end), "utf8") > bytes - note.length) end = Math.floor(end * 0.9);
  return `${text.slice(0, end)}${note}`;
}

/** A run's outcome parsed from what the run sent, or why it cannot be one. */
export type ParsedOutcome = { ok: true; outcome: RunOutcome } | { ok: false; problem: string };

/**
 * Parses what a run says it ended with. The result must be JSON text of at most
 * MAX_RESULT_BYTES (a bigger one becomes a `result_too_large` failure, as the runner itself
 * reports it); logs, messages and stacks are cut to their caps; `browser_ms` is at most
 * `maxBrowserMs` (the run's own duration, as the supervisor measured it).
 */
export function parseRunOutcome(value: unknown, maxBrowserMs: number): ParsedOutcome {
  const parsed = outcomeSchema.safeParse(value);
  if (!parsed.success) return { ok: false, problem: `the run's outcome is malformed: ${parsed.error.issues[0]?.message ?? "invalid"}` };
  const sent = parsed.data;
  const browser_ms = Math.min(sent.browser_ms, Math.max(0, Math.round(maxBrowserMs)));
  if (sent.status === "failed") {
    const { code, message, stack } = sent.error;
    return { ok: true, outcome: { status: "failed", error: stack === undefined ? { code, message } : { code, message, stack }, logs: sent.logs, browser_ms } };
  }
  if (Buffer.byteLength(sent.result_json, "utf8") > MAX_RESULT_BYTES) {
    return { ok: true, outcome: { status: "failed", error: resultTooLarge(Buffer.byteLength(sent.result_json, "utf8")), logs: sent.logs, browser_ms } };
  }
  try {
    JSON.parse(sent.result_json);
  } catch {
    return { ok: false, problem: "the run's result is not JSON text" };
  }
  return { ok: true, outcome: { status: "succeeded", result_json: sent.result_json, logs: sent.logs, browser_ms } };
}

/** The error of a result over MAX_RESULT_BYTES (`bytes` when known). */
export function resultTooLarge(bytes?: number): { code: "result_too_large"; message: string } {
  const size = bytes === undefined ? "larger than" : `${(bytes / 1024 / 1024).toFixed(1)} MB of JSON, over`;
  return {
    code: "result_too_large",
    message: `The return value is ${size} the inline limit of ${MAX_RESULT_BYTES / 1024 / 1024} MB; save large output as an artifact`,
  };
}
