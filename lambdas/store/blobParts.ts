import { promisify } from "node:util";
import { gunzip, gunzipSync, gzip, gzipSync } from "node:zlib";

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

/** DynamoDB items are limited to 400 KB; large text is gzipped and split into parts below that. */
export const PART_BYTES = 300_000;

/** Gzips text and splits it into parts of at most PART_BYTES (always at least one part). */
export function toParts(text: string): Buffer[] {
  return split(gzipSync(text));
}

/**
 * toParts off the calling thread: zlib runs on libuv's thread pool, so a run's megabytes of
 * result are compressed without holding the thread that serves requests.
 */
export async function toPartsAsync(text: string): Promise<Buffer[]> {
  return split(await gzipAsync(text));
}

function split(data: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  for (let offset = 0; offset < data.length; offset += PART_BYTES) parts.push(data.subarray(offset, offset + PART_BYTES));
  return parts.length > 0 ? parts : [data];
}

/** Joins parts made by toParts, in order, back into the text. */
export function fromParts(parts: Uint8Array[]): string {
  return gunzipSync(Buffer.concat(parts.map((part) => Buffer.from(part)))).toString("utf8");
}

/** fromParts off the calling thread (libuv's thread pool; see toPartsAsync). */
export async function fromPartsAsync(parts: Uint8Array[]): Promise<string> {
  return (await gunzipAsync(Buffer.concat(parts.map((part) => Buffer.from(part))))).toString("utf8");
}
