import { constants } from "node:fs";
import { mkdir, open } from "node:fs/promises";
import path from "node:path";
import type { Artifact, BrowserfnClient } from "../../client";
import { CliError } from "./args";
import { EXIT } from "./exitCodes";

/** An artifact's name as the API allows it: a plain file name (never `.` or `..`, never a path). */
const ARTIFACT_NAME = /^[A-Za-z0-9._-]{1,128}$/;

/** One artifact written to disk: as listed, and where it went. */
export interface SavedArtifact {
  name: string;
  content_type: string;
  bytes: number;
  created_at: string;
  /** Which attempt of the run saved it (1 unless retried; a service from before retries says nothing: 1). */
  attempt: number;
  url: string;
  path: string;
}

function checkListed(items: Artifact[]): void {
  const names = new Set<string>();
  for (const item of items) {
    const name = typeof item.name === "string" ? item.name : String(item.name);
    if (!ARTIFACT_NAME.test(name) || /^\.+$/.test(name) || names.has(name)) {
      const why = names.has(name) ? "twice" : "as a name that is not a plain file name (^[A-Za-z0-9._-]{1,128}$)";
      throw new CliError(`The service listed the artifact ${JSON.stringify(name.slice(0, 140))} ${why}; nothing was saved`, EXIT.api);
    }
    names.add(name);
  }
}

/** Writes a file, replacing one of the same name but never following a symbolic link out of the directory. */
export async function writeFileHere(file: string, bytes: Uint8Array): Promise<void> {
  let handle;
  try {
    handle = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o644);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliError(`Cannot write ${file}: ${code === "ELOOP" ? "it is a symbolic link" : (code ?? (error as Error).message)}`, 2);
  }
  try {
    await handle.writeFile(bytes);
  } finally {
    await handle.close();
  }
}

/**
 * Downloads every artifact of a run into `dir` (created if need be), one file per artifact,
 * named as the service lists it. Names are checked before anything is written: a name that is
 * not a plain file name fails the whole download (exit 3), so nothing lands outside `dir`. A
 * download whose size differs from the listed one fails too.
 */
export async function saveArtifacts(api: BrowserfnClient, runId: string, dir: string, onSaved: (artifact: SavedArtifact) => void = () => undefined): Promise<SavedArtifact[]> {
  const { items } = await api.listArtifacts(runId);
  checkListed(items);
  try {
    await mkdir(dir, { recursive: true });
  } catch (error) {
    throw new CliError(`Cannot create ${dir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, 2);
  }
  const saved: SavedArtifact[] = [];
  for (const item of items) {
    const { bytes } = await api.downloadArtifact(runId, item.name);
    if (bytes.byteLength !== item.bytes) {
      throw new CliError(`The artifact ${item.name} is listed as ${item.bytes} bytes but ${bytes.byteLength} came; it was not saved`, EXIT.api);
    }
    const file = path.join(dir, item.name);
    await writeFileHere(file, bytes);
    const artifact = { name: item.name, content_type: item.content_type, bytes: item.bytes, created_at: item.created_at, attempt: item.attempt ?? 1, url: item.url, path: file };
    saved.push(artifact);
    onSaved(artifact);
  }
  return saved;
}
