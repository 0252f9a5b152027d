import { artifactContentType, type ArtifactItem, isArtifactName, MAX_ARTIFACT_BYTES_PER_RUN, MAX_ARTIFACTS_PER_RUN } from "../../artifacts/artifacts";
import type { RunItem } from "../../runs/types";
import type { RecordRunDeps } from "./recordRun";

/** Reported names read at most (untrusted list): the cap, and as many again to delete. */
const MAX_REPORTED_ARTIFACTS = 2 * MAX_ARTIFACTS_PER_RUN;
/** Deletes under way at once. */
const DELETE_CONCURRENCY = 10;

/** The artifact names an answer reports (untrusted: names checked, duplicates and extras dropped). */
export function artifactNamesOf(answer: unknown): string[] {
  const names = typeof answer === "object" && answer !== null ? (answer as { artifacts?: unknown }).artifacts : undefined;
  if (!Array.isArray(names)) return [];
  return [...new Set(names.slice(0, MAX_REPORTED_ARTIFACTS).filter(isArtifactName))];
}

/**
 * Records the artifacts a run reports, as S3 has them (the size and type of what is really
 * there: a run can only report names), at most MAX_ARTIFACTS_PER_RUN files and the run's bytes;
 * metered once (a retried recorder finds them recorded). What it reported past the caps is
 * deleted from the bucket (best effort: the bucket's lifecycle expires what is left); objects it
 * never reported are left to that lifecycle.
 */
export async function recordArtifacts(deps: RecordRunDeps, run: RunItem, names: string[]): Promise<void> {
  const cap = deps.storageCap ? await deps.storageCap(run.account_id) : Infinity;
  let total = 0;
  let files = 0;
  const overCaps: string[] = [];
  for (const name of names) {
    if (files >= MAX_ARTIFACTS_PER_RUN) {
      overCaps.push(name);
      continue;
    }
    const head = await deps.outcomes.artifactHead(run.run_id, name);
    if (!head) continue;
    if (total + head.bytes > MAX_ARTIFACT_BYTES_PER_RUN) {
      overCaps.push(name);
      continue;
    }
    const createdAt = deps.clock.now();
    const expiresAt = deps.store.artifacts.expiryOf(createdAt.toISOString());
    // Counted against the account's cap before it is recorded; a retried recorder gives back what it had counted.
    if (!(await deps.store.storage.reserve(run.account_id, head.bytes, expiresAt, cap, createdAt))) {
      deps.log(`run recorder: artifact ${name} of ${run.run_id} dropped: the account's storage is full (its plan's max_storage_mb)`);
      overCaps.push(name);
      continue;
    }
    total += head.bytes;
    files++;
    const item = {
      run_id: run.run_id,
      account_id: run.account_id,
      function_id: run.function_id,
      name,
      content_type: artifactContentType(name, head.contentType),
      bytes: head.bytes,
      created_at: createdAt.toISOString(),
      // Which attempt saved it (lambdas/retries), as locally.
      ...(run.attempt !== undefined && run.attempt > 1 ? { attempt: run.attempt } : {}),
    };
    if (await deps.store.artifacts.putIfAbsent(item)) await deps.store.meters.recordArtifactBytes(run, item.created_at, item.bytes);
    else if (!(await replacedEarlierAttempts(deps, run, item))) await deps.store.storage.release(run.account_id, head.bytes, expiresAt);
  }
  for (let i = 0; i < overCaps.length; i += DELETE_CONCURRENCY) {
    await Promise.all(
      overCaps.slice(i, i + DELETE_CONCURRENCY).map((name) =>
        deps.outcomes.deleteArtifact(run.run_id, name).catch((error: unknown) => deps.log(`run recorder: deleting artifact ${name} of ${run.run_id} over its caps failed: ${(error as Error).message}`)),
      ),
    );
  }
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
