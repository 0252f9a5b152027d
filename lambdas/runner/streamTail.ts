import type { Readable } from "node:stream";

/** Keeps the last `chars` characters a stream gives (a child's stderr, for the message of its failure). */
export function keepTail(stream: Readable | null | undefined, chars = 2048): () => string {
  let tail = "";
  stream?.on("data", (chunk: Buffer) => (tail = (tail + chunk.toString("utf8")).slice(-chars)));
  return () => tail.trim();
}
