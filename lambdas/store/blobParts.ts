import { gunzipSync, gzipSync } from "node:zlib";

/** DynamoDB items are limited to 400 KB; large text is gzipped and split into parts below that. */
export const PART_BYTES = 300_000;

/** Gzips text and splits it into parts of at most PART_BYTES (always at least one part). */
export function toParts(text: string): Buffer[] {
  const data = gzipSync(text);
  const parts: Buffer[] = [];
  for (let offset = 0; offset < data.length; offset += PART_BYTES) parts.push(data.subarray(offset, offset + PART_BYTES));
  return parts.length > 0 ? parts : [data];
}

/** Joins parts made by toParts, in order, back into the text. */
export function fromParts(parts: Uint8Array[]): string {
  return gunzipSync(Buffer.concat(parts.map((part) => Buffer.from(part)))).toString("utf8");
}
