/**
 * Length-prefixed JSON frames: the channel between the service and a worker's sandbox.
 * Each frame is a 4-byte big-endian length and that many bytes of UTF-8 JSON. The reading
 * side caps a frame's length before it buffers it, so nothing a sandbox writes can make the
 * service hold more than `maxBytes` of one message (Node's own IPC channel buffers any line),
 * and, given `maxDepth`, refuses a frame nested deeper before it parses it (jsonDepth.ts).
 */
import { jsonTextDeeperThan } from "./jsonDepth";

/** Why a reader stopped: a frame too long, nested too deeply, or not JSON. */
export type FrameProblem = "too_large" | "too_deep" | "not_json";

/**
 * What a thread of its own found in a `done` frame's result: JSON (already redacted there when
 * the run had secrets), or not JSON; absent when it did not look (the reader checks it).
 */
export type ResultJsonVerdict = "valid" | "invalid";

/** A frame's body read elsewhere (resultParsing/: a worker thread), so the reading thread is not held by it. */
export type FrameParse = { ok: true; message: unknown; resultJson?: ResultJsonVerdict } | { ok: false; problem: string; kind: FrameProblem };

/** Frames of at least `minBytes` are parsed by `parse`, in their turn: later frames wait for them. */
export interface OffThreadFrames {
  minBytes: number;
  parse(body: Buffer): Promise<FrameParse>;
}

/** One frame of `message`. */
export function encodeFrame(message: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(message), "utf8");
  const header = Buffer.allocUnsafe(4);
  header.writeUInt32BE(body.length, 0);
  return Buffer.concat([header, body]);
}

/**
 * Reads frames from a byte stream; stops for good at the first frame it cannot accept. With
 * `offThread`, a big frame is parsed there and the frames behind it wait for it (order kept).
 */
export class FrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private failed = false;
  /** A big frame is being parsed off this thread: what arrives meanwhile is only buffered. */
  private parsing = false;

  constructor(
    private readonly maxBytes: number,
    private readonly onFrame: (message: unknown, resultJson?: ResultJsonVerdict) => void,
    private readonly onProblem: (problem: string, kind: FrameProblem) => void,
    private readonly maxDepth = Number.POSITIVE_INFINITY,
    private readonly offThread?: OffThreadFrames,
  ) {}

  push(chunk: Buffer): void {
    if (this.failed) return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    this.drain();
  }

  private drain(): void {
    while (!this.failed && !this.parsing && this.buffered >= 4) {
      // Joined only when the length is not in the first chunk, or once the whole frame is here.
      if ((this.chunks[0] as Buffer).length < 4) this.chunks = [Buffer.concat(this.chunks, this.buffered)];
      const length = (this.chunks[0] as Buffer).readUInt32BE(0);
      if (length > this.maxBytes) return this.fail(`a message of ${length} bytes is over the limit of ${this.maxBytes}`, "too_large");
      if (this.buffered < 4 + length) return;
      const all = this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks, this.buffered);
      const body = all.subarray(4, 4 + length);
      const rest = all.subarray(4 + length);
      this.chunks = rest.length > 0 ? [rest] : [];
      this.buffered = rest.length;
      if (this.offThread && length >= this.offThread.minBytes) return this.parseOffThread(this.offThread, body);
      const text = body.toString("utf8");
      if (this.maxDepth !== Number.POSITIVE_INFINITY && jsonTextDeeperThan(text, this.maxDepth)) return this.fail(`a message is nested more than ${this.maxDepth} levels deep`, "too_deep");
      let message: unknown;
      try {
        message = JSON.parse(text);
      } catch {
        return this.fail("a message is not JSON", "not_json");
      }
      this.onFrame(message);
    }
  }

  private parseOffThread(offThread: OffThreadFrames, body: Buffer): void {
    this.parsing = true;
    void offThread.parse(body).then(
      (parsed) => {
        this.parsing = false;
        if (this.failed) return;
        if (!parsed.ok) return this.fail(parsed.problem, parsed.kind);
        this.onFrame(parsed.message, parsed.resultJson);
        this.drain();
      },
      (error: unknown) => {
        this.parsing = false;
        if (!this.failed) this.fail(`a message could not be parsed: ${(error as Error).message}`, "too_large");
      },
    );
  }

  private fail(problem: string, kind: FrameProblem): void {
    this.failed = true;
    this.chunks = [];
    this.buffered = 0;
    this.onProblem(problem, kind);
  }
}
