import { readFile, writeFile } from "node:fs/promises";
import { Redactor } from "../secrets/redactor";
import { checkRecording } from "./checkRecording";
import { RECORDING_NAME_PATTERN } from "./recordingMode";

/**
 * For the local service's artifacts: when the file a run sent under `name` is a recording
 * (`recording-<n>.json`), checks it (checkRecording) and writes it back as checked. Returns
 * the bytes to keep, or why the file is dropped; any other name is kept as it came.
 */
export async function keepRecordingFile(name: string, file: string, bytes: number, secrets: readonly string[]): Promise<{ keep: true; bytes: number } | { keep: false; why: string }> {
  if (!RECORDING_NAME_PATTERN.test(name)) return { keep: true, bytes };
  const checked = checkRecording(await readFile(file, "utf8"), new Redactor(secrets));
  if (!checked.ok) return { keep: false, why: `not a recording: ${checked.problem}` };
  const data = Buffer.from(checked.json, "utf8");
  await writeFile(file, data);
  return { keep: true, bytes: data.byteLength };
}
