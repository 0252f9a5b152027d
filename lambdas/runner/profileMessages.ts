import { ARTIFACT_CHUNK_BYTES } from "../artifacts/artifacts";
import type { ProfileChannel } from "../../layers/runtime/runContext";
import { profileRefusal } from "../../layers/runtime/profileErrors";
import { MAX_PROFILE_BYTES } from "../../layers/runtime/sessionProfile";
import type { ProfileReply, WorkerMessage } from "./protocol";

/**
 * The worker's side of profiles: `open` asks the service (which checks the name, takes the
 * writer's lease, reads and decrypts the state) and gathers its `profile_reply` parts; `save`
 * sends the state in parts, each waiting until the channel took it. `onReply` gets the
 * service's parts.
 */
export function profileMessages(runId: string, send: (message: WorkerMessage) => Promise<void>): { channel: ProfileChannel; onReply(reply: ProfileReply): void } {
  let next = 1;
  const waiting = new Map<number, { parts: Buffer[]; bytes: number; resolve(state: Uint8Array): void; reject(error: Error): void }>();
  let saving: Promise<unknown> = Promise.resolve();
  return {
    channel: {
      open(name, persist) {
        const id = next++;
        return new Promise<Uint8Array>((resolve, reject) => {
          waiting.set(id, { parts: [], bytes: 0, resolve, reject });
          send({ type: "profile_open", runId, id, name, persist }).catch((error: Error) => {
            waiting.delete(id);
            reject(error);
          });
        });
      },
      save(name, state) {
        const sent = saving.then(async () => {
          if (state.byteLength > MAX_PROFILE_BYTES) {
            await send({ type: "profile_save", runId, name, data: "", last: true, too_large: true });
            throw new Error(`The profile '${name}' would hold ${state.byteLength} bytes; a profile holds at most ${MAX_PROFILE_BYTES} (50 MB): its previous state is kept`);
          }
          for (let offset = 0; ; offset += ARTIFACT_CHUNK_BYTES) {
            const last = offset + ARTIFACT_CHUNK_BYTES >= state.byteLength;
            await send({ type: "profile_save", runId, name, data: Buffer.from(state.subarray(offset, offset + ARTIFACT_CHUNK_BYTES)).toString("base64"), last });
            if (last) return;
          }
        });
        saving = sent.catch(() => undefined);
        return sent;
      },
    },
    onReply(reply) {
      const open = waiting.get(reply.id);
      if (!open) return;
      if (reply.error) {
        waiting.delete(reply.id);
        return open.reject(profileRefusal(String(reply.error.code), String(reply.error.message)));
      }
      const part = Buffer.from(typeof reply.data === "string" ? reply.data : "", "base64");
      open.parts.push(part);
      open.bytes += part.byteLength;
      if (open.bytes > MAX_PROFILE_BYTES) {
        waiting.delete(reply.id);
        return open.reject(new Error("The profile's state is over its size cap"));
      }
      if (reply.last) {
        waiting.delete(reply.id);
        open.resolve(Buffer.concat(open.parts));
      }
    },
  };
}
