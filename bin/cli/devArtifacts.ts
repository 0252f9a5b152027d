import { constants, closeSync, linkSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
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

/** Where each file is written as its parts come, in the folder (so that it can be moved in, not copied). */
const PARTIAL = ".partial";

/** Opens a file for writing, replacing one of the same name but never following a symbolic link. */
function openHere(file: string, append: boolean): number {
  return openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | (append ? constants.O_APPEND : constants.O_TRUNC), 0o644);
}

/**
 * Where `browserfn dev` keeps the artifacts of its run (`artifacts.save`, failure evidence,
 * downloads): files in `dir`, created on the first one, each written to `dir/.partial/` as its
 * parts come and moved into `dir` when complete (replacing a file of the same name this run wrote,
 * never one that was there before: that artifact is dropped, with `onDropped`). The
 * service's caps hold as they do for a deployed run (at most MAX_ARTIFACTS_PER_RUN files and
 * MAX_ARTIFACT_BYTES_PER_RUN bytes; a file over them is dropped, with `onDropped`), and a name
 * that is not a plain file name is never written. `onSaved` hears of each complete file.
 */
export function devArtifacts(dir: string, onSaved: (artifact: DevArtifact) => void, onDropped: (name: string, why: string) => void): DevArtifacts {
  const partial = path.join(dir, PARTIAL);
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
      if (name === PARTIAL) {
        if (current?.name !== name) onDropped(name, "the name is the folder's own (files are written there first)");
        current = { name, contentType, bytes: 0, rejected: true };
        if (last) current = undefined;
        return;
      }
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
      // A file this run wrote is replaced; one that was in the folder before is not (a page's
      // download could be named .env or package.json, and the folder may be the project's own).
      if (sizes.has(name)) renameSync(path.join(partial, name), file);
      else {
        try {
          linkSync(path.join(partial, name), file);
        } catch (error) {
          rmSync(path.join(partial, name), { force: true });
          if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
          return void onDropped(name, `a file of that name was in ${dir} already (not replaced)`);
        }
        rmSync(path.join(partial, name), { force: true });
      }
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
