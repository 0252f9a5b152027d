import { ARTIFACT_CHUNK_BYTES } from "../artifacts/artifacts";
import type { ProfileReply } from "../runner/protocol";
import type { OpenAnswer } from "./runProfiles";

/** The `profile_reply` messages answering open `id`: the state in parts (one empty last part for none), or one part with the error. */
export function* profileReplies(id: number, answer: OpenAnswer): Generator<ProfileReply> {
  if (!answer.ok) {
    yield { type: "profile_reply", id, data: "", last: true, error: { code: answer.code, message: answer.message } };
    return;
  }
  const state = answer.state;
  for (let offset = 0; ; offset += ARTIFACT_CHUNK_BYTES) {
    const last = offset + ARTIFACT_CHUNK_BYTES >= state.byteLength;
    yield { type: "profile_reply", id, data: Buffer.from(state.subarray(offset, offset + ARTIFACT_CHUNK_BYTES)).toString("base64"), last };
    if (last) return;
  }
}
