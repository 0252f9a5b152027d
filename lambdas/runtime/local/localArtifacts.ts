import { renameSync, utimesSync } from "node:fs";
import { readdir, readFile, rm, stat } from "node:fs/promises";
import path from "node:path";
import { artifactParts } from "../../artifacts/artifactParts";
import { type ArtifactItem, isArtifactName } from "../../artifacts/artifacts";
import type { Clock } from "../../deps";
import type { Store } from "../../store/store";

/** Receives the artifact parts of one run from its worker, in order (see WorkerProcess). */
export interface ArtifactReceiver {
  part(name: string, contentType: string, data: Buffer, last: boolean): void;
  /** Waits for the records of the artifacts received; drops a file left half-received. */
  finish(): Promise<void>;
}

export interface LocalArtifacts {
  /** A receiver for the run's artifacts: files under the data dir, records in the store. */
  receiver(run: { run_id: string; account_id: string; function_id: string; attempt?: number }): ArtifactReceiver;
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
 * Metering is as on AWS (recordRun.ts): each name a run kept counts once, with the bytes it
 * ended with, when the run ends; saving a name again replaces the file without counting twice.
 */
export function createLocalArtifacts(root: string, store: Pick<Store, "artifacts" | "meters">, log: (line: string) => void, clock: Clock): LocalArtifacts {
  const runDir = (runId: string) => path.join(root, runId.replace(/[^A-Za-z0-9_-]/g, "_"));
  return {
    receiver(run) {
      const dir = runDir(run.run_id);
      /** The items recorded, by name: the last of each is metered when the run ends. */
      const kept = new Map<string, ArtifactItem>();
      const pending = new Set<Promise<void>>();
      const parts = artifactParts(
        dir,
        ({ name, contentType, bytes, tmpPath }) => {
          const createdAt = clock.now();
          renameSync(tmpPath, path.join(dir, name));
          utimesSync(path.join(dir, name), createdAt, createdAt);
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
          // The last save of a name is what counts, whichever write ends first.
          kept.set(name, item);
          const write = store.artifacts.put(item).catch((error: unknown) => {
            if (kept.get(name) === item) kept.delete(name);
            log(`run ${run.run_id}: recording artifact ${name} failed: ${(error as Error).message}`);
          });
          pending.add(write);
          void write.finally(() => pending.delete(write));
          return true;
        },
        (name, why) => log(`run ${run.run_id}: artifact ${name} dropped: ${why}`),
      );
      return {
        part: parts.part,
        async finish() {
          parts.discard();
          await Promise.all(pending);
          for (const item of kept.values()) {
            await store.meters.recordArtifactBytes(run, item.created_at, item.bytes).catch((error: unknown) => log(`run ${run.run_id}: metering artifact ${item.name} failed: ${(error as Error).message}`));
          }
          kept.clear();
        },
      };
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
