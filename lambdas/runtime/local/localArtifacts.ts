import { appendFileSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { readdir, readFile, rm, stat } from "node:fs/promises";
import path from "node:path";
import { type ArtifactItem, isArtifactName, MAX_ARTIFACT_BYTES_PER_RUN, MAX_ARTIFACTS_PER_RUN } from "../../artifacts/artifacts";
import type { Store } from "../../store/store";

/** Receives the artifact parts of one run from its worker, in order (see WorkerProcess). */
export interface ArtifactReceiver {
  part(name: string, contentType: string, data: Buffer, last: boolean): void;
  /** Waits for the records of the artifacts received; drops a file left half-received. */
  finish(): Promise<void>;
}

export interface LocalArtifacts {
  /** A receiver for the run's artifacts: files under the data dir, records in the store. */
  receiver(run: { run_id: string; account_id: string; function_id: string }): ArtifactReceiver;
  /** An artifact's bytes, or null when its file is gone. */
  read(item: ArtifactItem): Promise<Uint8Array | null>;
  /** Removes the files of runs whose artifacts are past the retention; returns how many runs. */
  sweep(now?: Date): Promise<number>;
}

/**
 * Artifacts of the local service: `<data dir>/artifacts/<run_id>/<name>`, written by the service
 * from what a worker sends (the sandbox never sees the data dir), with the run's caps enforced
 * again here (the worker's own checks are its code's, so not to be trusted), and an item in the
 * store per file. Files expire with the retention (sweep).
 */
export function createLocalArtifacts(root: string, store: Pick<Store, "artifacts" | "meters">, log: (line: string) => void): LocalArtifacts {
  const runDir = (runId: string) => path.join(root, runId.replace(/[^A-Za-z0-9_-]/g, "_"));
  return {
    receiver(run) {
      const dir = runDir(run.run_id);
      const partial = path.join(dir, ".partial");
      const sizes = new Map<string, number>();
      const pending = new Set<Promise<void>>();
      let current: { name: string; contentType: string; bytes: number; rejected: string | null } | undefined;
      const tmp = (name: string) => path.join(partial, name);
      const reject = (why: string) => {
        if (!current || current.rejected) return;
        current.rejected = why;
        rmSync(tmp(current.name), { force: true });
        log(`run ${run.run_id}: artifact ${current.name} dropped: ${why}`);
      };
      return {
        part(name, contentType, data, last) {
          if (!isArtifactName(name)) return;
          if (current?.name !== name) {
            if (current) rmSync(tmp(current.name), { force: true }); // a file never finished
            current = { name, contentType, bytes: 0, rejected: null };
            mkdirSync(partial, { recursive: true });
            writeFileSync(tmp(name), "");
            if (!sizes.has(name) && sizes.size >= MAX_ARTIFACTS_PER_RUN) reject(`a run keeps at most ${MAX_ARTIFACTS_PER_RUN} artifacts`);
          }
          let others = 0;
          for (const [other, size] of sizes) if (other !== name) others += size;
          if (others + current.bytes + data.length > MAX_ARTIFACT_BYTES_PER_RUN) reject(`a run keeps at most ${MAX_ARTIFACT_BYTES_PER_RUN} bytes of artifacts`);
          if (!current.rejected) {
            appendFileSync(tmp(name), data);
            current.bytes += data.length;
          }
          if (!last) return;
          const done = current;
          current = undefined;
          if (done.rejected) return;
          renameSync(tmp(name), path.join(dir, name));
          sizes.set(name, done.bytes);
          const item: ArtifactItem = { ...run, name, content_type: done.contentType, bytes: done.bytes, created_at: new Date().toISOString() };
          const write = store.artifacts
            .put(item)
            .then(() => store.meters.recordArtifactBytes(run, item.created_at, item.bytes))
            .catch((error: unknown) => log(`run ${run.run_id}: recording artifact ${name} failed: ${(error as Error).message}`));
          pending.add(write);
          void write.finally(() => pending.delete(write));
        },
        async finish() {
          current = undefined;
          rmSync(partial, { recursive: true, force: true });
          await Promise.all(pending);
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

    async sweep(now = new Date()) {
      const cutoff = now.getTime() - store.artifacts.retentionDays * 86_400_000;
      let removed = 0;
      for (const entry of await readdir(root).catch(() => [] as string[])) {
        const dir = path.join(root, entry);
        const info = await stat(dir).catch(() => undefined);
        if (!info?.isDirectory() || info.mtimeMs > cutoff) continue;
        await rm(dir, { recursive: true, force: true });
        removed++;
      }
      return removed;
    },
  };
}
