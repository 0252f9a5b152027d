import type { ArtifactSink } from "../../layers/runtime/runContext";

/** The presigned POST of a run's artifacts (outcomeBucket.ts, ArtifactUpload): no S3 permission needed. */
export interface ArtifactUploadTarget {
  url: string;
  fields: Record<string, string>;
  keyPrefix: string;
}

/** One upload may take this long at most. */
const UPLOAD_TIMEOUT_MS = 60_000;

/**
 * The Lambda runner's artifacts: each `artifacts.save` POSTs the file to the run's presigned
 * POST (under `artifacts/<run_id>/`, the policy capping each file's size), and its name is kept
 * for the outcome (`names`), from which the trusted recorder records what S3 really holds.
 */
export function s3ArtifactSink(target: ArtifactUploadTarget, artifactsUrl: string): ArtifactSink & { names(): string[] } {
  const names = new Set<string>();
  return {
    names: () => [...names],
    async save(name, data, contentType) {
      const form = new FormData();
      for (const [field, value] of Object.entries(target.fields)) form.append(field, value);
      form.append("key", `${target.keyPrefix}${name}`);
      form.append("Content-Type", contentType);
      form.append("file", new Blob([new Uint8Array(data)], { type: contentType }), name);
      const response = await fetch(target.url, { method: "POST", body: form, signal: AbortSignal.timeout(UPLOAD_TIMEOUT_MS) });
      if (!response.ok) {
        const detail = (await response.text().catch(() => "")).slice(0, 300);
        throw new Error(`The artifact '${name}' could not be uploaded (HTTP ${response.status}${detail ? `: ${detail}` : ""})`);
      }
      names.add(name);
      return { name, url: `${artifactsUrl}${encodeURIComponent(name)}`, bytes: data.byteLength };
    },
  };
}
