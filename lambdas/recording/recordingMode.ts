/**
 * The function setting `recording`: whether the DOM of a run's pages is recorded (rrweb) and
 * kept as the artifacts `recording-<n>.json`. Free of imports: every bundle can take it.
 */
export const RECORDING_MODES = ["off", "failures", "all"] as const;
export type RecordingMode = (typeof RECORDING_MODES)[number];

/**
 * What a function records when its record says nothing (records stored before the setting, or no
 * choice made): the recordings of runs that do not succeed. A run that succeeds records its pages
 * and keeps nothing, and its events never leave the pages: within the 10 % of a warm invoke that
 * issue #25 allows (docs/benchmarks.md, "Recordings").
 */
export const DEFAULT_RECORDING: RecordingMode = "failures";

export function isRecordingMode(value: unknown): value is RecordingMode {
  return typeof value === "string" && (RECORDING_MODES as readonly string[]).includes(value);
}

/** The mode a stored value stands for (anything unknown: the default). */
export function recordingModeOf(value: unknown): RecordingMode {
  return isRecordingMode(value) ? value : DEFAULT_RECORDING;
}

/** True when a run that ended `succeeded` (or not) keeps its recordings under `mode`. */
export function keepsRecording(mode: RecordingMode, succeeded: boolean): boolean {
  return mode === "all" || (mode === "failures" && !succeeded);
}

/** Bytes of recorded events a run keeps at most, over all its pages; past them recording stops (the run goes on). */
export const MAX_RECORDING_BYTES_PER_RUN = 20 * 1024 * 1024;
/** How deeply a recording's JSON may nest (a DOM snapshot nests two levels per element). */
export const MAX_RECORDING_DEPTH = 600;
/** Pages of a run recorded at most (each its own artifact). */
export const MAX_RECORDED_PAGES = 10;
/** The artifact name of a run's n-th recorded page. */
export function recordingName(n: number): string {
  return `recording-${n}.json`;
}
export const RECORDING_NAME_PATTERN = /^recording-[0-9]{1,3}\.json$/;
