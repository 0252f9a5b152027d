/**
 * What a run reports about itself, parsed as untrusted input (shared/DESIGN.md, "Trust
 * boundaries"): a local worker's `done` message and a function Lambda's answer both pass
 * through `parseRunOutcome` before anything of them reaches a record. The result is a
 * RunOutcome with named fields only, every string capped; nothing else of the input survives.
 */
import { z } from "zod";
import type { ResultJsonVerdict } from "./frames";
import { jsonTextDeeperThan } from "./jsonDepth";
import { MAX_JSON_DEPTH, MAX_LOG_BYTES, MAX_RESULT_BYTES, capBytes, resultTooDeep, resultTooLarge } from "./outputLimits";
import type { RunOutcome } from "./protocol";

export { MAX_JSON_DEPTH, MAX_LOG_BYTES, MAX_RESULT_BYTES, capBytes, resultTooDeep, resultTooLarge } from "./outputLimits";

const MAX_MESSAGE_CHARS = 4096;
const MAX_STACK_CHARS = 16_384;
const TRUNCATED = "…[truncated]";

/**
 * The error codes a run may report about itself; anything else is the service's to say. A
 * Lambda runner reports `function_timeout` when it stopped the run at its deadline (a run that
 * claims it falsely only makes its own outcome a timeout), and `insufficient_memory` when a
 * session start was refused because the function's memory_mb cannot hold a browser, and
 * `out_of_memory` when the Lambda runner saw its browser killed by the out-of-memory killer
 * (the service records that `function_crashed`, naming the memory limit).
 */
export const RUN_ERROR_CODES = ["function_error", "result_not_serializable", "result_too_large", "result_too_deep", "function_timeout", "insufficient_memory", "out_of_memory"] as const;

const capped = (max: number) => z.string().transform((text) => (text.length > max ? `${text.slice(0, max)}${TRUNCATED}` : text));
const logs = z.string().transform((text) => capBytes(text, MAX_LOG_BYTES));
const browserMs = z.number().finite().nonnegative().transform(Math.round);
const error = z.object({ code: z.enum(RUN_ERROR_CODES), message: capped(MAX_MESSAGE_CHARS), stack: capped(MAX_STACK_CHARS).optional() });

const outcomeSchema = z.discriminatedUnion("status", [
  z.object({ status: z.literal("succeeded"), result_json: z.string(), logs, browser_ms: browserMs }),
  z.object({ status: z.literal("failed"), error, logs, browser_ms: browserMs }),
]);

/** A run's outcome parsed from what the run sent, or why it cannot be one. */
export type ParsedOutcome = { ok: true; outcome: RunOutcome } | { ok: false; problem: string };

/**
 * Parses what a run says it ended with. The result must be JSON text of at most
 * MAX_RESULT_BYTES (a bigger one becomes a `result_too_large` failure, as the runner itself
 * reports it) nested at most MAX_JSON_DEPTH levels (a deeper one becomes `result_too_deep`,
 * found by a linear scan of the text before it is parsed); logs, messages and stacks are cut to their caps; `browser_ms` is at most
 * `maxBrowserMs` (the run's own duration, as the supervisor measured it). `resultJson`: what a
 * thread of its own already found the result to be (resultParsing/), so it is not parsed here again.
 */
export function parseRunOutcome(value: unknown, maxBrowserMs: number, resultJson?: ResultJsonVerdict): ParsedOutcome {
  const parsed = outcomeSchema.safeParse(value);
  if (!parsed.success) return { ok: false, problem: `the run's outcome is malformed: ${parsed.error.issues[0]?.message ?? "invalid"}` };
  const sent = parsed.data;
  const bound = Number.isFinite(maxBrowserMs) ? Math.max(0, Math.round(maxBrowserMs)) : 0;
  const browser_ms = Math.min(sent.browser_ms, bound);
  if (sent.status === "failed") {
    const { code, message, stack } = sent.error;
    return { ok: true, outcome: { status: "failed", error: stack === undefined ? { code, message } : { code, message, stack }, logs: sent.logs, browser_ms } };
  }
  // Already parsed (size, depth and JSON) on the parsing thread: nothing of it is scanned here again.
  if (resultJson === "valid") return { ok: true, outcome: { status: "succeeded", result_json: sent.result_json, logs: sent.logs, browser_ms } };
  if (Buffer.byteLength(sent.result_json, "utf8") > MAX_RESULT_BYTES) {
    return { ok: true, outcome: { status: "failed", error: resultTooLarge(Buffer.byteLength(sent.result_json, "utf8")), logs: sent.logs, browser_ms } };
  }
  if (jsonTextDeeperThan(sent.result_json, MAX_JSON_DEPTH)) {
    return { ok: true, outcome: { status: "failed", error: resultTooDeep(), logs: sent.logs, browser_ms } };
  }
  if (resultJson === "invalid") return { ok: false, problem: "the run's result is not JSON text" };
  try {
    JSON.parse(sent.result_json);
  } catch {
    return { ok: false, problem: "the run's result is not JSON text" };
  }
  return { ok: true, outcome: { status: "succeeded", result_json: sent.result_json, logs: sent.logs, browser_ms } };
}
