/**
 * The service's check of a recording a run kept (`recording-<n>.json`): it crossed from the
 * run, so it is untrusted. It is kept only as an array of rrweb events, each written field by
 * field (`type`, `timestamp`, `data`), within MAX_RECORDING_BYTES_PER_RUN and
 * MAX_RECORDING_DEPTH, with the function's secret values redacted (as in logs and results).
 */
import { jsonTextDeeperThan } from "../runner/jsonDepth";
import type { Redactor } from "../secrets/redactor";
import { MAX_RECORDING_BYTES_PER_RUN, MAX_RECORDING_DEPTH } from "./recordingMode";

/** rrweb's event types: DomContentLoaded 0 … Plugin 6. */
const MAX_EVENT_TYPE = 6;

export type CheckedRecording = { ok: true; json: string; events: number } | { ok: false; problem: string };

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** `text` as a recording to keep (redacted by `redactor`), or why it is not one. */
export function checkRecording(text: string, redactor: Redactor): CheckedRecording {
  if (text.length > MAX_RECORDING_BYTES_PER_RUN) return { ok: false, problem: `over ${MAX_RECORDING_BYTES_PER_RUN} bytes` };
  if (jsonTextDeeperThan(text, MAX_RECORDING_DEPTH)) return { ok: false, problem: `nested deeper than ${MAX_RECORDING_DEPTH} levels` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { ok: false, problem: "not JSON" };
  }
  if (!Array.isArray(parsed)) return { ok: false, problem: "not an array of events" };
  const events: { type: number; data: Record<string, unknown>; timestamp: number }[] = [];
  for (const item of parsed as unknown[]) {
    if (!isRecord(item)) return { ok: false, problem: "an event that is not an object" };
    const { type, data, timestamp } = item;
    if (typeof type !== "number" || !Number.isInteger(type) || type < 0 || type > MAX_EVENT_TYPE) return { ok: false, problem: "an event of no known type" };
    if (typeof timestamp !== "number" || !Number.isFinite(timestamp)) return { ok: false, problem: "an event without a timestamp" };
    if (!isRecord(data)) return { ok: false, problem: "an event without data" };
    events.push({ type, data, timestamp });
  }
  return { ok: true, json: JSON.stringify(redactor.value(events)), events: events.length };
}
