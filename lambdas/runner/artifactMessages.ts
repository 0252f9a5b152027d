import { ARTIFACT_CHUNK_BYTES } from "../artifacts/artifacts";
import type { WorkerMessage } from "./protocol";

/**
 * The `artifact` messages of one file of run `runId`, in order: its bytes in parts of at most
 * ARTIFACT_CHUNK_BYTES (base64), the last with `last` (an empty file is one empty last part).
 * Made one at a time, so a big file is never all encoded at once.
 */
export function* artifactMessages(runId: string, name: string, contentType: string, data: Uint8Array): Generator<WorkerMessage> {
  for (let offset = 0; ; offset += ARTIFACT_CHUNK_BYTES) {
    const chunk = data.subarray(offset, offset + ARTIFACT_CHUNK_BYTES);
    const last = offset + ARTIFACT_CHUNK_BYTES >= data.byteLength;
    yield { type: "artifact", runId, name, content_type: contentType, data: Buffer.from(chunk).toString("base64"), last };
    if (last) return;
  }
}
