/**
 * What the service accepts from a worker's sandbox: each frame parsed with a schema into one
 * of a few known messages, strings capped. Anything else is a protocol violation, and the
 * worker is replaced. The run's outcome itself is parsed by parseRunOutcome.
 */
import { z } from "zod";
import { MAX_FRAME_BASE64, MAX_FRAME_URL } from "../../live/liveFrames";
import { ARTIFACT_CHUNK_BYTES, isArtifactName, MAX_ARTIFACT_BYTES_PER_RUN, MAX_ARTIFACTS_PER_RUN } from "../../artifacts/artifacts";

const text = (max: number) => z.string().transform((value) => value.slice(0, max));

const frameSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("ready") }),
  z.object({ type: z.literal("init_failed"), message: text(4096) }),
  z.object({ type: z.literal("done"), runId: z.string().max(64), outcome: z.unknown() }),
  z.object({ type: z.literal("idle"), runId: z.string().max(64), leftover: z.array(text(100)).max(64) }),
  z.object({ type: z.literal("worker_exit"), code: z.number().int().nullable(), signal: text(32).nullable() }),
  z.object({ type: z.literal("oversize"), bytes: z.number().nonnegative() }),
  z.object({ type: z.literal("evidence_done"), runId: z.string().max(64) }),
  z.object({ type: z.literal("standby"), pid: z.number().int().min(0).max(2 ** 22), ready: z.boolean() }),
  z.object({ type: z.literal("log"), runId: z.string().max(64), text: z.string() }),
  z.object({ type: z.literal("profile_open"), runId: z.string().max(64), id: z.number().int().min(1).max(1_000_000), name: z.string().max(63), persist: z.boolean() }),
  z.object({
    type: z.literal("profile_save"),
    runId: z.string().max(64),
    name: z.string().max(63),
    data: z.string().max(Math.ceil(ARTIFACT_CHUNK_BYTES / 3) * 4).regex(/^[A-Za-z0-9+/]*={0,2}$/),
    last: z.boolean(),
    too_large: z.boolean().optional(),
  }),
  z.object({
    type: z.literal("artifact"),
    runId: z.string().max(64),
    name: z.string().refine(isArtifactName, "not an artifact name"),
    content_type: z.string().max(200),
    // Base64 of at most ARTIFACT_CHUNK_BYTES.
    data: z.string().max(Math.ceil(ARTIFACT_CHUNK_BYTES / 3) * 4).regex(/^[A-Za-z0-9+/]*={0,2}$/),
    last: z.boolean(),
  }),
  z.object({
    type: z.literal("frame"),
    runId: z.string().max(64),
    // A JPEG (its base64 starts with the SOI marker), of at most MAX_FRAME_BYTES.
    data: z.string().max(MAX_FRAME_BASE64).regex(/^\/9j\/[A-Za-z0-9+/]*={0,2}$/),
    url: text(MAX_FRAME_URL),
    width: z.number().int().min(1).max(20_000),
    height: z.number().int().min(1).max(20_000),
  }),
]);

export type WorkerFrame = z.infer<typeof frameSchema>;

/** A frame as one of the known messages, or why it is none. */
export function parseFrame(value: unknown): { ok: true; frame: WorkerFrame } | { ok: false; problem: string } {
  const parsed = frameSchema.safeParse(value);
  if (parsed.success) return { ok: true, frame: parsed.data };
  const type = typeof (value as { type?: unknown })?.type === "string" ? String((value as { type: string }).type).slice(0, 40) : "?";
  // The schema's own words can list every known type: cut, as the type is, to keep the log line short.
  return { ok: false, problem: `an unexpected message (${type}): ${(parsed.error.issues[0]?.message ?? "invalid").slice(0, 120)}` };
}

/** Messages one run may send (done and idle, and a little room); past it the worker is replaced. */
export const MAX_FRAMES_PER_RUN = 8;
/**
 * Log messages one run may send besides (its output is capped at 64 KB before it is sent): its
 * first 1000 lines one each, then one per turn of its event loop that logs (workerMain's logStream).
 */
export const MAX_LOG_FRAMES_PER_RUN = 4000;
/** Artifact parts one run may send besides: its bytes in parts, and one more part per file. */
export const MAX_ARTIFACT_FRAMES_PER_RUN = Math.ceil(MAX_ARTIFACT_BYTES_PER_RUN / ARTIFACT_CHUNK_BYTES) + 2 * MAX_ARTIFACTS_PER_RUN;

/** Profile messages one run may send besides: opens, and the parts of its saves (each at most the cap). */
export const MAX_PROFILE_FRAMES_PER_RUN = 4 * (Math.ceil((50 * 1024 * 1024) / ARTIFACT_CHUNK_BYTES) + 1) + 100;
