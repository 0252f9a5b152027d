import { artifactContentType, type ArtifactItem, isArtifactName, MAX_ARTIFACT_BYTES_PER_RUN, MAX_ARTIFACTS_PER_RUN } from "../../artifacts/artifacts";
import type { RunItem } from "../../runs/types";
import { recheckRecording } from "../../recording/aws/recheckRecording";
import { MAX_RECORDING_BYTES_PER_RUN, RECORDING_NAME_PATTERN } from "../../recording/recordingMode";
import { NO_SECRETS, type Redactor } from "../../secrets/redactor";
import type { RecordRunDeps } from "./recordRun";

/** A reported artifact: its name and the upload slot it went to. */
export interface ReportedArtifact {
  slot: number;
  name: string;
}

/**
 * The artifacts an answer reports (untrusted): `artifacts` lists names by upload slot (index =
 * slot), at most MAX_ARTIFACTS_PER_RUN of them; a slot whose entry is no valid name, or a name
 * already reported by an earlier slot, is dropped (and swept with the rest).
 */
export function reportedArtifactsOf(answer: unknown): ReportedArtifact[] {
  const names = typeof answer === "object" && answer !== null ? (answer as { artifacts?: unknown }).artifacts : undefined;
  if (!Array.isArray(names)) return [];
  const seen = new Set<string>();
  const reported: ReportedArtifact[] = [];
  names.slice(0, MAX_ARTIFACTS_PER_RUN).forEach((name: unknown, slot) => {
    if (!isArtifactName(name) || seen.has(name)) return;
    seen.add(name);
    reported.push({ slot, name });
  });
  return reported;
}

/**
 * Records the artifacts a run reports, as S3 has them in their slots (the size and type of what
 * is really there: a run can only report names), at most the run's bytes and the account's
 * storage; each kept one is copied to its name (where downloads find it) and metered once (a
 * retried recorder finds it recorded). A recording (`recording-<n>.json`) is not copied as it
 * came: it is read, checked and redacted with `redactor` (recheckRecording, as the local service
 * checks one), and the checked text is what is kept; one that fails the check is dropped.
 * Nothing else is deleted here: the recorder sweeps the run's whole upload prefix once the run
 * is recorded (sweepUploads).
 */
export async function recordArtifacts(deps: RecordRunDeps, run: RunItem, reported: ReportedArtifact[], attempt = 1, redactor: Redactor = NO_SECRETS): Promise<void> {
  const cap = deps.storageCap ? await deps.storageCap(run.account_id) : Infinity;
  let total = 0;
  // The run's recordings are checked up to the runner's cap over all of them (recheckRecording).
  const recordingBudget = { bytes: MAX_RECORDING_BYTES_PER_RUN };
  for (const { slot, name } of reported) {
    const head = await deps.outcomes.slotHead(run.run_id, slot, attempt);
    if (!head) continue;
    const recording = RECORDING_NAME_PATTERN.test(name) ? await recheckRecording(deps.recordings, redactor, { runId: run.run_id, slot, attempt, bytes: head.bytes }, recordingBudget) : undefined;
    if (recording && !recording.keep) {
      deps.log(`run recorder: recording ${name} of ${run.run_id} dropped: ${recording.why}`);
      continue;
    }
    const bytes = recording ? recording.data.byteLength : head.bytes;
    if (total + bytes > MAX_ARTIFACT_BYTES_PER_RUN) continue;
    const createdAt = deps.clock.now();
    const expiresAt = deps.store.artifacts.expiryOf(createdAt.toISOString());
    // Counted against the account's cap before it is recorded; a retried recorder gives back what it had counted.
    if (!(await deps.store.storage.reserve(run.account_id, bytes, expiresAt, cap, createdAt))) {
      deps.log(`run recorder: artifact ${name} of ${run.run_id} dropped: the account's storage is full (its plan's max_storage_mb)`);
      continue;
    }
    total += bytes;
    if (recording) await deps.recordings?.putArtifact(run.run_id, name, recording.data);
    else await deps.outcomes.keepArtifact(run.run_id, slot, name, attempt);
    const item = {
      run_id: run.run_id,
      account_id: run.account_id,
      function_id: run.function_id,
      name,
      content_type: recording ? "application/json" : artifactContentType(name, head.contentType),
      bytes,
      created_at: createdAt.toISOString(),
      // Which attempt saved it (lambdas/retries), as locally.
      ...(run.attempt !== undefined && run.attempt > 1 ? { attempt: run.attempt } : {}),
    };
    if (await deps.store.artifacts.putIfAbsent(item)) await deps.store.meters.recordArtifactBytes(run, item.created_at, item.bytes);
    else if (!(await replacedEarlierAttempts(deps, run, item))) await deps.store.storage.release(run.account_id, bytes, expiresAt);
  }
}

/**
 * Deletes everything the run could write (OutcomeBucket.sweepUploads), once its record is
 * final: what it reported and kept was copied, the rest goes. A failure is logged, not thrown
 * (the run is recorded; the bucket's lifecycle expires what is left).
 */
export async function sweepUploads(deps: Pick<RecordRunDeps, "outcomes" | "log">, runId: string, attempt = 1): Promise<void> {
  await deps.outcomes.sweepUploads(runId, attempt).catch((error: unknown) => deps.log(`run recorder: sweeping the uploads of ${runId} failed: ${(error as Error).message}`));
}

/**
 * A later attempt of a retried run saved a name an earlier attempt had saved: its upload
 * replaced the object (the same key), so its record replaces the earlier one, whose bytes go
 * back to the account's storage. False when the record there is this attempt's own (a retried
 * recorder): nothing changes.
 */
async function replacedEarlierAttempts(deps: RecordRunDeps, run: RunItem, item: ArtifactItem): Promise<boolean> {
  const existing = await deps.store.artifacts.get(run.run_id, item.name);
  if (!existing || (existing.attempt ?? 1) >= (run.attempt ?? 1)) return false;
  await deps.store.artifacts.put(item);
  await deps.store.storage.release(run.account_id, existing.bytes, deps.store.artifacts.expiryOf(existing.created_at));
  await deps.store.meters.recordArtifactBytes(run, item.created_at, item.bytes);
  return true;
}
