import { gunzipSync, gzipSync } from "node:zlib";
import type { ParameterInfo } from "../code/extractParameters";

/** Parameters' text from this size up is kept gzipped (a module's thousands of alike entries shrink to a few KB). */
const GZIP_FROM_BYTES = 16 * 1024;

/**
 * A function's parameters as its records keep them: one attribute, JSON text, gzipped (binary)
 * from GZIP_FROM_BYTES up. As a list of maps (how records were written before), a module of
 * 3,000 parameters made 3,000 maps, each marshalled on the request thread and each validated by
 * the store on every write (the local store, dynalite, is one thread: every account's requests
 * waited behind it), and its record came close to DynamoDB's 400 KB item.
 */
export function parametersToStored(variables: readonly ParameterInfo[] | null): string | Uint8Array | null {
  if (variables === null) return null;
  const known = storedOf.get(variables);
  if (known !== undefined) return known;
  const text = JSON.stringify(variables);
  const stored = text.length < GZIP_FROM_BYTES ? text : new Uint8Array(gzipSync(text));
  storedOf.set(variables, stored);
  return stored;
}

/**
 * The stored form of parameter lists already written: a deploy writes one list twice (the
 * version and the function record), and a compiled list is never changed after. Kept by the
 * list itself, so it goes with it.
 */
const storedOf = new WeakMap<readonly ParameterInfo[], string | Uint8Array>();

/** The parameters of a stored record: its text or gzipped text, or the list of maps of a record written before. */
export function parametersFrom(stored: unknown): ParameterInfo[] | null {
  if (Array.isArray(stored)) return stored as ParameterInfo[];
  try {
    const text = typeof stored === "string" ? stored : stored instanceof Uint8Array ? gunzipSync(stored).toString("utf8") : undefined;
    if (text === undefined) return null;
    const value = JSON.parse(text) as unknown;
    return Array.isArray(value) ? (value as ParameterInfo[]) : null;
  } catch {
    return null;
  }
}
