import { renameSync, utimesSync } from "node:fs";
import { readdir, readFile, rm, stat } from "node:fs/promises";
import path from "node:path";
import { artifactParts } from "../../artifacts/artifactParts";
import { type ArtifactItem, isArtifactName } from "../../artifacts/artifacts";
import type { Clock } from "../../deps";
import type { Store } from "../../store/store";
import { keepRecordingFile, type RecordingChecks } from "../../recording/keepRecordingFile";

/** Receives the artifact parts of one run from its worker, in order (see WorkerProcess). */
export interface ArtifactReceiver {
  part(name: string, contentType: string, data: Buffer, last: boolean): void;
  /** Waits for the records of the artifacts received; drops a file left half-received. */
  finish(): Promise<void>;
}

export interface LocalArtifacts {
  /** A receiver for the run's artifacts: files under the data dir, records in the store. */
  /** `secrets`: the function's secret values, redacted from the recordings the run keeps (keepRecordingFile). */
  receiver(run: { run_id: string; account_id: string; function_id: string; attempt?: number; secrets?: readonly string[] }): ArtifactReceiver;
  /** The bytes the account may still keep under its plan's storage cap (what a run is told at its start). */
  bytesLeft(accountId: string): Promise<number>;
  /** An artifact's bytes, or null when its file is gone. */
  read(item: ArtifactItem): Promise<Uint8Array | null>;
  /** Removes the files and items of runs whose artifacts are past the retention (by the clock); returns how many runs. */
  sweep(now?: Date): Promise<number>;
}

/**
 * Artifacts of the local service: `<data dir>/artifacts/<run_id>/<name>`, written by the service
 * from what a worker sends (the sandbox never sees the data dir), with the run's caps enforced
 * again here (the worker's own checks are its code's, so not to be trusted), and an item in the
 * store per file. A file's mtime is its item's `created_at` (the service's clock), and the sweep
 * removes a run's files and items once its newest file is past the retention.
 *
 * Each file is counted against its account's storage cap (`storageCap`, in bytes) before it is
 * kept: past the cap it is dropped, whatever the worker said (the runtime refuses it first, with
 * `storage_limit_exceeded`, from the room the run was told at its start). A name saved again
 * gives back what its previous file counted.
 *
 * Metering is as on AWS (recordRun.ts): each name a run kept counts once, with the bytes it
 * ended with, when the run ends; saving a name again replaces the file without counting twice.
 */
/** How long an account's bytes left, as read, are told to its runs (unless this service counted or freed some of its bytes since). */
const BYTES_LEFT_MS = 5_000;

export function createLocalArtifacts(
  root: string,
  store: Pick<Store, "artifacts" | "meters" | "storage">,
  log: (line: string) => void,
  clock: Clock,
  storageCap: (accountId: string) => Promise<number>,
  /** Where the recordings runs keep are checked (the result thread: ResultParser). */
  recordings: RecordingChecks,
): LocalArtifacts {
  const runDir = (runId: string) => path.join(root, runId.replace(/[^A-Za-z0-9_-]/g, "_"));
  /**
   * What each account may still keep, as last read (see bytesLeft): dropped whenever this
   * service counts or frees bytes of the account, read again after BYTES_LEFT_MS.
   */
  const left = new Map<string, { at: number; bytes: Promise<number> }>();
  return {
    receiver(run) {
      const dir = runDir(run.run_id);
      /** The items recorded, by name: the last of each is metered when the run ends. */
      const kept = new Map<string, ArtifactItem>();
      /** Files are counted and recorded one after another, in the order they came. */
      let queue: Promise<void> = Promise.resolve();
      let held = 0;
      let cap: Promise<number> | undefined;
      const keepFile = async (name: string, contentType: string, sentBytes: number, heldPath: string) => {
        const checked = await keepRecordingFile(recordings, run.account_id, name, heldPath, sentBytes, run.secrets ?? []);
        if (!checked.keep) {
          await rm(heldPath, { force: true });
          log(`run ${run.run_id}: artifact ${name} dropped: ${checked.why}`);
          return;
        }
        const bytes = checked.bytes;
        const createdAt = clock.now();
        const expiresAt = store.artifacts.expiryOf(createdAt.toISOString());
        cap ??= storageCap(run.account_id);
        left.delete(run.account_id);
        if (!(await store.storage.reserve(run.account_id, bytes, expiresAt, await cap, createdAt))) {
          await rm(heldPath, { force: true });
          log(`run ${run.run_id}: artifact ${name} dropped: the account's storage is full (its plan's max_storage_mb)`);
          return;
        }
        const final = path.join(dir, name);
        renameSync(heldPath, final);
        utimesSync(final, createdAt, createdAt);
        const item: ArtifactItem = {
          run_id: run.run_id,
          account_id: run.account_id,
          function_id: run.function_id,
          name,
          content_type: contentType,
          bytes,
          created_at: createdAt.toISOString(),
          ...(run.attempt !== undefined && run.attempt > 1 ? { attempt: run.attempt } : {}),
        };
        const previous = kept.get(name);
        kept.set(name, item);
        try {
          await store.artifacts.put(item);
        } catch (error) {
          kept.delete(name);
          log(`run ${run.run_id}: recording artifact ${name} failed: ${(error as Error).message}`);
          await store.storage.release(run.account_id, bytes, expiresAt);
          left.delete(run.account_id);
          return;
        }
        if (previous) await store.storage.release(run.account_id, previous.bytes, store.artifacts.expiryOf(previous.created_at));
        left.delete(run.account_id);
      };
      const parts = artifactParts(
        dir,
        ({ name, contentType, bytes, tmpPath }) => {
          // Out of the way of the next file of the same name while the store is asked (`#` is in no artifact name).
          const heldPath = `${tmpPath}#${held++}`;
          renameSync(tmpPath, heldPath);
          queue = queue
            .then(() => keepFile(name, contentType, bytes, heldPath))
            .catch((error: unknown) => log(`run ${run.run_id}: keeping artifact ${name} failed: ${(error as Error).message}`));
          return true;
        },
        (name, why) => log(`run ${run.run_id}: artifact ${name} dropped: ${why}`),
      );
      return {
        part: parts.part,
        async finish() {
          await queue;
          parts.discard();
          for (const item of kept.values()) {
            await store.meters.recordArtifactBytes(run, item.created_at, item.bytes).catch((error: unknown) => log(`run ${run.run_id}: metering artifact ${item.name} failed: ${(error as Error).message}`));
          }
          kept.clear();
        },
      };
    },

    // Told to a run so that its `artifacts.save` refuses past the cap; the cap itself holds in
    // the store (reserve, one conditional write per file). So a reading a little old is good
    // enough, and two store reads leave the path of every run but one a few seconds per account.
    bytesLeft(accountId) {
      const now = performance.now();
      const known = left.get(accountId);
      if (known && now - known.at < BYTES_LEFT_MS) return known.bytes;
      const bytes = Promise.all([storageCap(accountId), store.storage.held(accountId, clock.now())]).then(([cap, held]) => Math.max(0, cap - held));
      left.set(accountId, { at: now, bytes });
      bytes.catch(() => left.get(accountId)?.bytes === bytes && left.delete(accountId));
      return bytes;
    },

    async read(item) {
      if (!isArtifactName(item.name)) return null;
      return readFile(path.join(runDir(item.run_id), item.name)).then(
        (bytes) => new Uint8Array(bytes),
        () => null,
      );
    },

    async sweep(now = clock.now()) {
      const cutoff = now.getTime() - store.artifacts.retentionDays * 86_400_000;
      let removed = 0;
      for (const entry of await readdir(root).catch(() => [] as string[])) {
        const dir = path.join(root, entry);
        const newest = await newestTime(dir);
        if (newest === undefined || newest > cutoff) continue;
        await rm(dir, { recursive: true, force: true });
        await store.artifacts.removeRun(entry).catch((error: unknown) => log(`artifacts of run ${entry}: removing their items failed: ${(error as Error).message}`));
        removed++;
      }
      return removed;
    },
  };
}

/** The mtime of a run dir's newest file (its own when it holds none); undefined when it is no dir. */
async function newestTime(dir: string): Promise<number | undefined> {
  const info = await stat(dir).catch(() => undefined);
  if (!info?.isDirectory()) return undefined;
  let newest: number | undefined;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const file = await stat(path.join(dir, name)).catch(() => undefined);
    if (file?.isFile()) newest = Math.max(newest ?? 0, file.mtimeMs);
  }
  return newest ?? info.mtimeMs;
}
