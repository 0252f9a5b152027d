/**
 * Artifacts: files a run keeps (`artifacts.save` in browserfn/runtime, the failure evidence of a
 * run that failed with pages open, files its browser downloaded). What the runtime SDK, the
 * runners and the service agree on; free of imports, so every bundle can take it.
 */

/** An artifact's name: a file name, never a path (and never `.` or `..`). */
export const ARTIFACT_NAME_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;

export function isArtifactName(name: unknown): name is string {
  return typeof name === "string" && ARTIFACT_NAME_PATTERN.test(name) && !/^\.+$/.test(name);
}

/** Files a run may keep. */
export const MAX_ARTIFACTS_PER_RUN = 100;
/** Bytes a run may keep in all. */
export const MAX_ARTIFACT_BYTES_PER_RUN = 100 * 1024 * 1024;
/** How a local worker sends an artifact to the service: in messages of at most this many bytes. */
export const ARTIFACT_CHUNK_BYTES = 256 * 1024;
/** How long artifacts are kept unless configured otherwise. */
export const DEFAULT_ARTIFACT_RETENTION_DAYS = 7;
/** A content type, as a run may give it. */
export const CONTENT_TYPE_PATTERN = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,63}(;[ -~]{0,128})?$/i;

/** One kept file of a run, as stored and listed. */
export interface ArtifactItem {
  run_id: string;
  account_id: string;
  function_id: string;
  name: string;
  content_type: string;
  bytes: number;
  created_at: string;
  /** Which attempt of its run saved it (lambdas/retries; absent: the first). */
  attempt?: number;
}

const TYPES: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  svg: "image/svg+xml",
  pdf: "application/pdf",
  html: "text/html; charset=utf-8",
  htm: "text/html; charset=utf-8",
  json: "application/json",
  txt: "text/plain; charset=utf-8",
  log: "text/plain; charset=utf-8",
  csv: "text/csv; charset=utf-8",
  xml: "application/xml",
  zip: "application/zip",
};

/** The content type an artifact's name suggests (application/octet-stream when none). */
export function contentTypeFor(name: string): string {
  const extension = /\.([A-Za-z0-9]+)$/.exec(name)?.[1]?.toLowerCase() ?? "";
  return TYPES[extension] ?? "application/octet-stream";
}

/** The content type a run gave, when it is one; else the one its name suggests. */
export function artifactContentType(name: string, given: unknown): string {
  return typeof given === "string" && CONTENT_TYPE_PATTERN.test(given) ? given : contentTypeFor(name);
}
