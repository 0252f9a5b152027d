import { linkSync, renameSync, rmSync } from "node:fs";
import path from "node:path";
import { artifactParts } from "../../lambdas/artifacts/artifactParts";
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

/**
 * Where `browserfn dev` keeps the artifacts of its run (`artifacts.save`, failure evidence,
 * downloads): files in `dir`, created on the first one, assembled as the service assembles them
 * (artifactParts: the run's caps, plain names, a file dropped past them with `onDropped`) and
 * moved into `dir` when complete, replacing a file of the same name this run wrote, never one
 * that was there before (that artifact is dropped, with `onDropped`). `onSaved` hears of each
 * complete file.
 */
export function devArtifacts(dir: string, onSaved: (artifact: DevArtifact) => void, onDropped: (name: string, why: string) => void): DevArtifacts {
  const saved: DevArtifact[] = [];
  const parts = artifactParts(
    dir,
    ({ name, contentType, bytes, tmpPath }) => {
      const file = path.join(dir, name);
      const again = saved.findIndex((earlier) => earlier.name === name);
      // A file this run wrote is replaced; one that was in the folder before is not (a page's
      // download could be named .env or package.json, and the folder may be the project's own).
      if (again >= 0) renameSync(tmpPath, file);
      else {
        try {
          linkSync(tmpPath, file);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
          onDropped(name, `a file of that name was in ${dir} already (not replaced)`);
          return false;
        }
        rmSync(tmpPath, { force: true });
      }
      if (again >= 0) saved.splice(again, 1);
      const artifact = { name, content_type: contentType, bytes, path: file };
      saved.push(artifact);
      onSaved(artifact);
      return true;
    },
    onDropped,
  );
  return {
    saved,
    part: parts.part,
    async finish() {
      parts.discard();
    },
  };
}
