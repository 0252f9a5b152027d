import { encodeFrame } from "../runner/frames";
import type { ProfileReply } from "../runner/protocol";
import { profileReplies } from "./profileReplies";
import type { OpenAnswer, RunProfiles } from "./runProfiles";

/** A profile message of a worker's run, as workerChannel parsed it. */
export type ProfileFrame =
  | { type: "profile_open"; id: number; name: string; persist: boolean }
  | { type: "profile_save"; name: string; data: string; last: boolean; too_large?: boolean | undefined };

const UNAVAILABLE: OpenAnswer = { ok: false, code: "profile_unavailable", message: "Profiles are not available here" };

/**
 * Hands a run's profile message to its RunProfiles: a save's part is gathered; an open is
 * answered with `profile_reply` frames through `write`, unless `stillAsked()` says the run
 * that asked has ended meanwhile.
 */
export function onProfileFrame(frame: ProfileFrame, profiles: RunProfiles | undefined, write: (frame: Buffer) => void, stillAsked: () => boolean): void {
  if (frame.type === "profile_save") return profiles?.savePart(frame.name, Buffer.from(frame.data, "base64"), frame.last, frame.too_large === true);
  const answer = profiles ? profiles.open(frame.name, frame.persist) : Promise.resolve(UNAVAILABLE);
  void answer.then((answered) => {
    if (!stillAsked()) return;
    for (const reply of profileReplies(frame.id, answered)) write(encodeFrame(reply satisfies ProfileReply));
  });
}
