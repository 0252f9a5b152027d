import { closeSync, constants, mkdirSync, openSync, rmSync, writeSync } from "node:fs";
import path from "node:path";
import { isArtifactName, MAX_ARTIFACT_BYTES_PER_RUN, MAX_ARTIFACTS_PER_RUN } from "./artifacts";

/** The folder, inside a run's artifact folder, where files are written as their parts come. */
export const PARTIAL_DIR = ".partial";

/** One artifact whose parts all came, in `tmpPath` (inside PARTIAL_DIR) until its owner moves it. */
export interface AssembledArtifact {
  name: string;
  contentType: string;
  bytes: number;
  tmpPath: string;
}

export interface ArtifactParts {
  /** A part of the artifact `name` (one artifact's parts come in a row, the last with `last`). */
  part(name: string, contentType: string, data: Buffer, last: boolean): void;
  /** Drops a file left half-received, and the partial folder. */
  discard(): void;
}

/** Opens a file for writing (appending or from empty), never through a symbolic link. */
function openHere(file: string, append: boolean): number {
  return openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | (append ? constants.O_APPEND : constants.O_TRUNC), 0o644);
}

/**
 * A run's artifacts from the parts its worker sends (untrusted): each file is written to
 * `<dir>/PARTIAL_DIR/<name>` as its parts come and handed to `complete` when whole, which moves
 * it and says whether it was kept. The run's caps hold here, whatever the worker checked: at most
 * MAX_ARTIFACTS_PER_RUN names and MAX_ARTIFACT_BYTES_PER_RUN bytes of kept files (a name saved
 * again counts with its last size); a file past them is dropped as its parts come, with
 * `dropped`. A name that is not a plain file name is never written; PARTIAL_DIR itself is dropped.
 */
export function artifactParts(
  dir: string,
  complete: (artifact: AssembledArtifact) => boolean,
  dropped: (name: string, why: string) => void,
): ArtifactParts {
  const partial = path.join(dir, PARTIAL_DIR);
  const tmp = (name: string) => path.join(partial, name);
  /** Kept files by name, with their sizes. */
  const sizes = new Map<string, number>();
  let current: { name: string; contentType: string; bytes: number; rejected: boolean } | undefined;
  const reject = (why: string) => {
    if (!current || current.rejected) return;
    current.rejected = true;
    rmSync(tmp(current.name), { force: true });
    dropped(current.name, why);
  };
  return {
    part(name, contentType, data, last) {
      if (!isArtifactName(name)) return;
      if (current?.name !== name) {
        if (current && !current.rejected) rmSync(tmp(current.name), { force: true }); // a file never finished
        current = { name, contentType, bytes: 0, rejected: false };
        if (name === PARTIAL_DIR) reject("the name is the folder's own (files are written there first)");
        else {
          mkdirSync(partial, { recursive: true });
          closeSync(openHere(tmp(name), false));
          if (!sizes.has(name) && sizes.size >= MAX_ARTIFACTS_PER_RUN) reject(`a run keeps at most ${MAX_ARTIFACTS_PER_RUN} artifacts`);
        }
      }
      let others = 0;
      for (const [other, size] of sizes) if (other !== name) others += size;
      if (others + current.bytes + data.length > MAX_ARTIFACT_BYTES_PER_RUN) reject(`a run keeps at most ${MAX_ARTIFACT_BYTES_PER_RUN} bytes of artifacts`);
      if (!current.rejected) {
        const fd = openHere(tmp(name), true);
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
      if (complete({ name, contentType: done.contentType, bytes: done.bytes, tmpPath: tmp(name) })) sizes.set(name, done.bytes);
      else rmSync(tmp(name), { force: true });
    },
    discard() {
      current = undefined;
      rmSync(partial, { recursive: true, force: true });
    },
  };
}
