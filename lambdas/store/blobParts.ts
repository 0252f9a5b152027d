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
 * zlib's work in chunks of 1 MiB: each chunk's result comes back to the calling thread once
 * (with the default 16 KiB, a 4 MB result took ~200 round trips, ~120 ms of that thread's time
 * against ~15 ms). Level 1 for what is written: on 3 MB of repetitive text the default level took
 * 68 ms against 26 (for 3 KB of output against 14 KB), and the same on text that does not
 * compress (~0.5 s for 4 MB of random base64 on this machine, either level).
 */
const CHUNK_BYTES = 1024 * 1024;

/**
 * toParts off the calling thread: zlib runs on libuv's thread pool, so a run's megabytes of
 * result are compressed without holding the thread that serves requests.
 */
export async function toPartsAsync(text: string): Promise<Buffer[]> {
  return split(await gzipAsync(text, GZIP_OPTIONS));
}

/** How blobs are gzipped, wherever that is done (see CHUNK_BYTES). */
export const GZIP_OPTIONS = { chunkSize: CHUNK_BYTES, level: 1 } as const;

/**
 * Where a run's big blob (its result, its parameters) is gzipped for the store, whose turn it
 * is: locally the result thread, accounts in turn (resultParsing/resultParser.ts), so a tenant's
 * megabytes of results are not encoded on the thread that serves requests.
 */
export interface BlobCompressor {
  /** `text` gzipped with GZIP_OPTIONS, as gzip(text) would give it. */
  gzip(accountId: string, text: string): Promise<Uint8Array>;
}

/** Splits gzipped bytes into parts of at most PART_BYTES (always at least one part). */
export function split(data: Uint8Array): Buffer[] {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const parts: Buffer[] = [];
  for (let offset = 0; offset < bytes.length; offset += PART_BYTES) parts.push(bytes.subarray(offset, offset + PART_BYTES));
  return parts.length > 0 ? parts : [bytes];
}

/** Joins parts made by toParts, in order, back into the text. */
export function fromParts(parts: Uint8Array[]): string {
  return gunzipSync(Buffer.concat(parts.map((part) => Buffer.from(part)))).toString("utf8");
}

/** fromParts off the calling thread (libuv's thread pool; see toPartsAsync). */
export async function fromPartsAsync(parts: Uint8Array[]): Promise<string> {
  return (await gunzipAsync(Buffer.concat(parts.map((part) => Buffer.from(part))), { chunkSize: CHUNK_BYTES })).toString("utf8");
}
