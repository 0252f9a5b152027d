import { artifactContentType, isArtifactName, MAX_ARTIFACT_BYTES_PER_RUN, MAX_ARTIFACTS_PER_RUN } from "../../lambdas/artifacts/artifacts";
import type { RunState } from "./runContext";

/** What {@link artifacts.save} answers. */
export interface SavedArtifact {
  name: string;
  /** `{base_url}/runs/<run_id>/artifacts/<name>`: where the API serves it (with the account's token). */
  url: string;
  bytes: number;
}

/** Why `name` is no artifact's name (for `artifacts.save` and a page's `path`). */
export function badArtifactName(name: unknown): string {
  return `An artifact's name is a file name of 1 to 128 characters of [A-Za-z0-9._-], got ${JSON.stringify(String(name)).slice(0, 140)}`;
}

/**
 * Keeps `data` as `run`'s artifact `name` after the run's checks: a valid name, at most
 * MAX_ARTIFACTS_PER_RUN files and MAX_ARTIFACT_BYTES_PER_RUN bytes (the service checks again).
 */
export async function saveArtifact(run: RunState, name: string, data: Uint8Array | string, contentType?: string): Promise<SavedArtifact> {
  if (!isArtifactName(name)) throw new Error(badArtifactName(name));
  let bytes: Uint8Array;
  if (typeof data === "string") bytes = new TextEncoder().encode(data);
  else if (data instanceof Uint8Array) bytes = data;
  else throw new Error("artifacts.save() takes a Buffer, a Uint8Array or a string");
  const before = run.artifactSizes.get(name);
  if (before === undefined && run.artifactSizes.size >= MAX_ARTIFACTS_PER_RUN) {
    throw new Error(`A run keeps at most ${MAX_ARTIFACTS_PER_RUN} artifacts; '${name}' would be one more`);
  }
  let total = bytes.byteLength;
  for (const [other, size] of run.artifactSizes) if (other !== name) total += size;
  if (total > MAX_ARTIFACT_BYTES_PER_RUN) {
    throw new Error(`A run keeps at most ${MAX_ARTIFACT_BYTES_PER_RUN / 1024 / 1024} MB of artifacts; '${name}' (${bytes.byteLength} bytes) would make ${total}`);
  }
  return keep(run, name, bytes, artifactContentType(name, contentType));
}

/** Hands `bytes` to the run's sink as `name` and counts it against the run's caps (checked by the caller). */
export async function keep(run: RunState, name: string, bytes: Uint8Array, contentType: string): Promise<SavedArtifact> {
  if (!run.artifacts) throw new Error("artifacts.save() is not available where this run executes");
  const saved = await run.artifacts.save(name, bytes, contentType);
  run.artifactSizes.set(name, bytes.byteLength);
  return saved;
}
