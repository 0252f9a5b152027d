import type { ArtifactSink } from "../../layers/runtime/runContext";
import { type RunUploads, slotPolicy } from "./lambdaPackage";

/** One upload may take this long at most. */
const UPLOAD_TIMEOUT_MS = 60_000;

/**
 * POSTs `data` to S3 as the run's presigned form allows (`policy`, `signature`, the exact
 * `key`); throws with S3's answer when it refuses (a file over the policy's cap, an expired form).
 */
export async function postToS3(
  uploads: Pick<RunUploads, "url" | "fields">,
  form: { key: string; policy: string; signature: string; contentType: string; data: Uint8Array; fileName: string },
  timeoutMs: number,
): Promise<Response> {
  const body = new FormData();
  for (const [field, value] of Object.entries(uploads.fields)) body.append(field, value);
  body.append("Policy", form.policy);
  body.append("X-Amz-Signature", form.signature);
  body.append("key", form.key);
  body.append("Content-Type", form.contentType);
  body.append("file", new Blob([new Uint8Array(form.data)], { type: form.contentType }), form.fileName);
  return fetch(uploads.url, { method: "POST", body, signal: AbortSignal.timeout(timeoutMs) });
}

/**
 * The Lambda runner's artifacts: each `artifacts.save` POSTs the file to the next free slot of
 * the run's uploads (a name saved again reuses its slot), and `names()` lists the saved names
 * by slot, which the answer reports (`artifacts`, index = slot) and from which the trusted
 * recorder keeps what S3 really holds. With every slot used, a new name is refused here (S3
 * would refuse any other key anyway).
 */
export function s3ArtifactSink(uploads: RunUploads, artifactsUrl: string): ArtifactSink & { names(): string[] } {
  const slots: string[] = [];
  const { key_prefix: keyPrefix, policy_template: template, signatures } = uploads.artifacts;
  return {
    names: () => [...slots],
    async save(name, data, contentType) {
      let slot = slots.indexOf(name);
      if (slot === -1) {
        if (slots.length >= signatures.length) throw new Error(`The artifact '${name}' could not be kept: a run keeps at most ${signatures.length} artifacts`);
        slot = slots.length;
        slots.push(name);
      }
      const response = await postToS3(
        uploads,
        { key: `${keyPrefix}${slot}`, policy: slotPolicy(template, slot), signature: signatures[slot] ?? "", contentType, data, fileName: name },
        UPLOAD_TIMEOUT_MS,
      );
      if (!response.ok) {
        const detail = (await response.text().catch(() => "")).slice(0, 300);
        throw new Error(`The artifact '${name}' could not be uploaded (HTTP ${response.status}${detail ? `: ${detail}` : ""})`);
      }
      return { name, url: `${artifactsUrl}${encodeURIComponent(name)}`, bytes: data.byteLength };
    },
  };
}
