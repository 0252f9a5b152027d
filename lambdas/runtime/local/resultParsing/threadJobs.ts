/**
 * The jobs the result-parsing thread takes (resultParser.ts), each the service's own costly
 * work for one run's result, and what each answers: a big frame parsed (parseFrameBody.ts), and
 * the body of a run's webhook deliveries built (deliveryBody.ts).
 */
import type { FrameParse } from "../../../runner/frames";
import { buildDeliveryBody, type DeliveryBodyInput } from "../../../webhooks/deliveryBody";
import { type ParseJob, parseFrameBody } from "./parseFrameBody";

export interface BodyJob {
  id: number;
  kind: "body";
  input: DeliveryBodyInput;
}

export type ThreadJob = (ParseJob & { kind: "frame" }) | BodyJob;

export type BodyReply = { ok: true; body: string } | { ok: false; error: string };

export type ThreadReply = { id: number; threadId: number } & ({ kind: "frame"; parse: FrameParse } | { kind: "body"; built: BodyReply });

/** Does `job` (on the thread). Never throws: a failure is in the reply. */
export function runJob(job: ThreadJob, threadId: number): ThreadReply {
  if (job.kind === "body") {
    let built: BodyReply;
    try {
      built = { ok: true, body: buildDeliveryBody(job.input) };
    } catch (error) {
      built = { ok: false, error: (error as Error).message };
    }
    return { id: job.id, threadId, kind: "body", built };
  }
  let parse: FrameParse;
  try {
    parse = parseFrameBody(job.body, job.maxDepth, job.secrets);
  } catch (error) {
    parse = { ok: false, problem: `a message could not be parsed: ${(error as Error).message}`, kind: "too_large" };
  }
  return { id: job.id, threadId, kind: "frame", parse };
}
