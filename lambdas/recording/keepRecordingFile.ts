import type { RecordingVerdict } from "../runtime/local/resultParsing/threadJobs";
import { RECORDING_NAME_PATTERN } from "./recordingMode";

/** Where the local service checks the recordings runs keep: the result thread, in the account's turn and CPU share (ResultParser). */
export interface RecordingChecks {
  checkRecording(account: string, file: string, secrets: readonly string[]): Promise<RecordingVerdict>;
}

/**
 * For the local service's artifacts: when the file a run of `account` sent under `name` is a
 * recording (`recording-<n>.json`), checks it (checkRecording, off the thread that serves every
 * account's requests: parsing up to 20 MB of a run's JSON takes a few hundred ms) and has it
 * written back as checked. Returns the bytes to keep, or why the file is dropped; any other name
 * is kept as it came.
 */
export async function keepRecordingFile(
  checks: RecordingChecks,
  account: string,
  name: string,
  file: string,
  bytes: number,
  secrets: readonly string[],
): Promise<RecordingVerdict> {
  if (!RECORDING_NAME_PATTERN.test(name)) return { keep: true, bytes };
  return checks.checkRecording(account, file, secrets);
}
