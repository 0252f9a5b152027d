/**
 * The worker thread that checks recordings (recordingChecker.ts): reads a recording a run kept,
 * checks and redacts it (checkRecording), and writes it back as checked, off the thread that
 * serves requests (a 20 MB recording takes the parser a few hundred milliseconds).
 */
import { readFile, writeFile } from "node:fs/promises";
import { parentPort } from "node:worker_threads";
import { Redactor } from "../secrets/redactor";
import { checkRecording } from "./checkRecording";
import type { RecordingCheckJob, RecordingCheckReply } from "./recordingChecker";

async function check(job: RecordingCheckJob): Promise<RecordingCheckReply> {
  try {
    const checked = checkRecording(await readFile(job.file, "utf8"), new Redactor(job.secrets));
    if (!checked.ok) return { id: job.id, keep: false, why: `not a recording: ${checked.problem}` };
    const data = Buffer.from(checked.json, "utf8");
    await writeFile(job.file, data);
    return { id: job.id, keep: true, bytes: data.byteLength };
  } catch (error) {
    return { id: job.id, keep: false, why: `it could not be checked: ${(error as Error).message}` };
  }
}

// One at a time: a thread checks one recording, the next waits (their memory is not added up).
let chain: Promise<void> = Promise.resolve();
parentPort?.on("message", (job: RecordingCheckJob) => {
  chain = chain.then(async () => parentPort?.postMessage(await check(job)));
});
