import { RecordingChecker } from "./recordingChecker";
import { RECORDING_NAME_PATTERN } from "./recordingMode";

/** The local service's recording checks: one thread for the process, started at the first recording. */
const checker = new RecordingChecker();

/**
 * For the local service's artifacts: when the file a run sent under `name` is a recording
 * (`recording-<n>.json`), checks it (checkRecording, on a thread of its own: parsing up to 20 MB
 * of a run's JSON is kept off the thread that serves every account's requests) and writes it
 * back as checked. Returns the bytes to keep, or why the file is dropped; any other name is
 * kept as it came.
 */
export async function keepRecordingFile(name: string, file: string, bytes: number, secrets: readonly string[]): Promise<{ keep: true; bytes: number } | { keep: false; why: string }> {
  if (!RECORDING_NAME_PATTERN.test(name)) return { keep: true, bytes };
  const checked = await checker.check(file, secrets);
  return checked.keep ? { keep: true, bytes: checked.bytes } : { keep: false, why: checked.why };
}
