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

/** One frame of `message`. */
export function encodeFrame(message: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(message), "utf8");
  const header = Buffer.allocUnsafe(4);
  header.writeUInt32BE(body.length, 0);
  return Buffer.concat([header, body]);
}

/** Reads frames from a byte stream; stops for good at the first frame it cannot accept. */
export class FrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private failed = false;

  constructor(
    private readonly maxBytes: number,
    private readonly onFrame: (message: unknown) => void,
    private readonly onProblem: (problem: string, kind: FrameProblem) => void,
    private readonly maxDepth = Number.POSITIVE_INFINITY,
  ) {}

  push(chunk: Buffer): void {
    if (this.failed) return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    while (!this.failed && this.buffered >= 4) {
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

  private fail(problem: string, kind: FrameProblem): void {
    this.failed = true;
    this.chunks = [];
    this.buffered = 0;
    this.onProblem(problem, kind);
  }
}
