import { constants, closeSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import path from "node:path";
import { isArtifactName, MAX_ARTIFACT_BYTES_PER_RUN, MAX_ARTIFACTS_PER_RUN } from "../../lambdas/artifacts/artifacts";
import type { ArtifactReceiver } from "../../lambdas/runtime/local/localArtifacts";

/** One artifact `dev` wrote. */
export interface DevArtifact {
  name: string;
  content_type: string;
  bytes: number;
  path: string;
}

export interface DevArtifacts extends ArtifactReceiver {
  /** What was written, in the order the run finished each file. */
  readonly saved: DevArtifact[];
}

/** Opens a file for writing, replacing one of the same name but never following a symbolic link. */
function openHere(file: string, append: boolean): number {
  return openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | (append ? constants.O_APPEND : constants.O_TRUNC), 0o644);
}

/**
 * Where `browserfn dev` keeps the artifacts of its run (`artifacts.save`, failure evidence,
 * downloads): files in `dir`, created on the first one, each written to `dir/.partial/` as its
 * parts come and moved into `dir` when complete (a file of the same name is replaced). The
 * service's caps hold as they do for a deployed run (at most MAX_ARTIFACTS_PER_RUN files and
 * MAX_ARTIFACT_BYTES_PER_RUN bytes; a file over them is dropped, with `onDropped`), and a name
 * that is not a plain file name is never written. `onSaved` hears of each complete file.
 */
export function devArtifacts(dir: string, onSaved: (artifact: DevArtifact) => void, onDropped: (name: string, why: string) => void): DevArtifacts {
  const partial = path.join(dir, ".partial");
  const saved: DevArtifact[] = [];
  const sizes = new Map<string, number>();
  let current: { name: string; contentType: string; bytes: number; rejected: boolean } | undefined;
  const drop = (why: string) => {
    if (!current || current.rejected) return;
    current.rejected = true;
    rmSync(path.join(partial, current.name), { force: true });
    onDropped(current.name, why);
  };
  return {
    saved,
    part(name, contentType, data, last) {
      if (!isArtifactName(name)) return;
      if (current?.name !== name) {
        if (current) rmSync(path.join(partial, current.name), { force: true }); // a file never finished
        current = { name, contentType, bytes: 0, rejected: false };
        mkdirSync(partial, { recursive: true });
        closeSync(openHere(path.join(partial, name), false));
        if (!sizes.has(name) && sizes.size >= MAX_ARTIFACTS_PER_RUN) drop(`a run keeps at most ${MAX_ARTIFACTS_PER_RUN} artifacts`);
      }
      let others = 0;
      for (const [other, size] of sizes) if (other !== name) others += size;
      if (others + current.bytes + data.length > MAX_ARTIFACT_BYTES_PER_RUN) drop(`a run keeps at most ${MAX_ARTIFACT_BYTES_PER_RUN} bytes of artifacts`);
      if (!current.rejected) {
        const fd = openHere(path.join(partial, name), true);
        try {
          writeSync(fd, data);
        } finally {
          closeSync(fd);
        }
        current.bytes += data.length;
      }
      if (!last) return;
      const done = current;
      current = undefined;
      if (done.rejected) return;
      const file = path.join(dir, name);
      renameSync(path.join(partial, name), file);
      sizes.set(name, done.bytes);
      const artifact = { name, content_type: done.contentType, bytes: done.bytes, path: file };
      const again = saved.findIndex((earlier) => earlier.name === name);
      if (again >= 0) saved.splice(again, 1);
      saved.push(artifact);
      onSaved(artifact);
    },
    async finish() {
      current = undefined;
      rmSync(partial, { recursive: true, force: true });
    },
  };
}
