/**
 * The jobs the result-parsing thread takes (resultParser.ts), each the service's own costly
 * work for one run's result, and what each answers: a big frame parsed (parseFrameBody.ts), a
 * big result gzipped for the store (blobParts.ts), the body of a run's webhook deliveries
 * built (deliveryBody.ts), and a recording a run kept checked and redacted (checkRecording.ts).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { checkRecording } from "../../../recording/checkRecording";
import { Redactor } from "../../../secrets/redactor";
import type { FrameParse } from "../../../runner/frames";
import { GZIP_OPTIONS } from "../../../store/blobParts";
import { buildDeliveryBody, type DeliveryBodyInput } from "../../../webhooks/deliveryBody";
import { type ParseJob, parseFrameBody } from "./parseFrameBody";

export interface BodyJob {
  id: number;
  kind: "body";
  input: DeliveryBodyInput;
}

export interface GzipJob {
  id: number;
  kind: "gzip";
  text: string;
}

/** A recording a run kept: its file, read, checked, redacted and written back as checked. */
export interface RecordingJob {
  id: number;
  kind: "recording";
  file: string;
  secrets: readonly string[];
}

export type ThreadJob = (ParseJob & { kind: "frame" }) | BodyJob | GzipJob | RecordingJob;

/** A recording checked: the bytes kept, or why the file is dropped. */
export type RecordingVerdict = { keep: true; bytes: number } | { keep: false; why: string };

export type BodyReply = { ok: true; body: string } | { ok: false; error: string };

export type GzipReply = { ok: true; bytes: Uint8Array } | { ok: false; error: string };

/** The thread's first message: its Linux thread id (null where there is none), for its CPU to be charged to the accounts it works for. */
export interface ThreadHello {
  tid: number | null;
}

/** `cpuGroup`: the thread's cpu cgroup while it did the job (whose account's share it counted against), where it can be read. */
export type ThreadReply = { id: number; threadId: number; cpuGroup?: string } & ({ kind: "frame"; parse: FrameParse } | { kind: "body"; built: BodyReply } | { kind: "gzip"; gzipped: GzipReply } | { kind: "recording"; checked: RecordingVerdict });

/** What a reply's bytes are moved with (gzipped bytes: a buffer of their own). */
export function transferOf(reply: ThreadReply): ArrayBuffer[] {
  return reply.kind === "gzip" && reply.gzipped.ok ? [reply.gzipped.bytes.buffer as ArrayBuffer] : [];
}

/** Does `job` (on the thread). Never throws: a failure is in the reply. */
export function runJob(job: ThreadJob, threadId: number): ThreadReply {
  if (job.kind === "recording") return { id: job.id, threadId, kind: "recording", checked: checkRecordingFile(job.file, job.secrets) };
  if (job.kind === "gzip") {
    let gzipped: GzipReply;
    try {
      // A copy of its own, exactly its size (zlib's output can be a view on a bigger chunk): moved, not copied, to the service.
      gzipped = { ok: true, bytes: new Uint8Array(gzipSync(job.text, GZIP_OPTIONS)) };
    } catch (error) {
      gzipped = { ok: false, error: (error as Error).message };
    }
    return { id: job.id, threadId, kind: "gzip", gzipped };
  }
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

/** Reads the recording at `file`, checks and redacts it, and writes it back as checked (a 20 MB recording takes the parser a few hundred ms). */
function checkRecordingFile(file: string, secrets: readonly string[]): RecordingVerdict {
  try {
    const checked = checkRecording(readFileSync(file, "utf8"), new Redactor(secrets));
    if (!checked.ok) return { keep: false, why: `not a recording: ${checked.problem}` };
    const data = Buffer.from(checked.json, "utf8");
    writeFileSync(file, data);
    return { keep: true, bytes: data.byteLength };
  } catch (error) {
    return { keep: false, why: `it could not be checked: ${(error as Error).message}` };
  }
}
