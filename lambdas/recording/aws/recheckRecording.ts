/**
 * The run recorder's check of a recording a function's Lambda uploaded (AWS): the same check as
 * the local service's (checkRecording: an array of rrweb events written field by field, within
 * MAX_RECORDING_BYTES_PER_RUN and MAX_RECORDING_DEPTH, the function's secret values redacted).
 * The Lambda runner redacted and capped it already, but what it uploaded came from a run, so
 * it is kept only as checked here. It runs in the recorder's own invocation, which records this
 * one run: no request of any account waits behind it.
 */
import type { Redactor } from "../../secrets/redactor";
import { checkRecording } from "../checkRecording";
import { MAX_RECORDING_BYTES_PER_RUN } from "../recordingMode";
import type { UploadedRecordings } from "./uploadedRecordings";

export type RecheckedRecording = { keep: true; data: Uint8Array } | { keep: false; why: string };

/**
 * Slot `slot` of the run's uploads as a recording to keep (checked and redacted), or why it is
 * dropped. `budget`: the bytes of recordings the run may still have checked (its recordings
 * count MAX_RECORDING_BYTES_PER_RUN in all, as the runner's cap: one run's checks are bounded
 * whatever it uploads); what this one reads is taken from it.
 */
export async function recheckRecording(
  recordings: UploadedRecordings | undefined,
  redactor: Redactor,
  upload: { runId: string; slot: number; attempt: number; bytes: number },
  budget: { bytes: number },
): Promise<RecheckedRecording> {
  if (!recordings) return { keep: false, why: "recordings are not checked here, so none is kept" };
  const over = (bytes: number) => ({ keep: false as const, why: `not a recording: the run's recordings are over ${MAX_RECORDING_BYTES_PER_RUN} bytes (this one ${bytes})` });
  // Its size as S3 has it (HeadObject): not even fetched past the budget.
  if (upload.bytes > budget.bytes) return over(upload.bytes);
  const read = await recordings.readSlot(upload.runId, upload.slot, budget.bytes, upload.attempt);
  if (read === null) return { keep: false, why: "it was not uploaded" };
  if ("tooLarge" in read) return over(read.tooLarge);
  budget.bytes -= read.bytes.byteLength;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(read.bytes);
  } catch {
    return { keep: false, why: "not a recording: not UTF-8 text" };
  }
  const checked = checkRecording(text, redactor);
  if (!checked.ok) return { keep: false, why: `not a recording: ${checked.problem}` };
  return { keep: true, data: new TextEncoder().encode(checked.json) };
}
