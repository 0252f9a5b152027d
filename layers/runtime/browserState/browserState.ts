/**
 * What a profile holds: what a site needs to recognise a returning browser. Driver-neutral
 * plain data (cookies as CDP's Storage domain gives them, each origin's localStorage and
 * IndexedDB as page script reads them), so either driver can load and save it.
 */
export interface BrowserState {
  cookies: StoredCookie[];
  origins: OriginState[];
}

export interface StoredCookie {
  name: string;
  value: string;
  domain: string;
  path: string;
  /** Epoch seconds; absent for a session cookie. */
  expires?: number;
  httpOnly: boolean;
  secure: boolean;
  sameSite?: "Strict" | "Lax" | "None";
}

export interface OriginState {
  /** `https://example.com` (scheme, host, port). */
  origin: string;
  localStorage: Array<[string, string]>;
  indexedDB: IndexedDbDatabase[];
}

/** One IndexedDB database, its stores and their records (values as JSON: structured-clone-only types are not kept). */
export interface IndexedDbDatabase {
  name: string;
  version: number;
  stores: Array<{
    name: string;
    keyPath: string | string[] | null;
    autoIncrement: boolean;
    indexes: Array<{ name: string; keyPath: string | string[]; unique: boolean; multiEntry: boolean }>;
    /** `key` only for stores without a keyPath (out-of-line keys). */
    records: Array<{ key?: unknown; value: unknown }>;
  }>;
}

export const EMPTY_STATE: BrowserState = { cookies: [], origins: [] };

/** The state's JSON text as bytes (what a profile stores and its size cap counts). */
export function stateBytes(state: BrowserState): Buffer {
  return Buffer.from(JSON.stringify(state), "utf8");
}

/** A state read back from bytes the service kept (its own writing): field by field, unknown parts dropped. */
export function stateFromBytes(bytes: Uint8Array): BrowserState {
  if (bytes.byteLength === 0) return { cookies: [], origins: [] };
  const parsed = JSON.parse(Buffer.from(bytes).toString("utf8")) as Partial<BrowserState>;
  const cookies = Array.isArray(parsed.cookies) ? parsed.cookies.filter((cookie) => cookie && typeof cookie.name === "string" && typeof cookie.domain === "string") : [];
  const origins = Array.isArray(parsed.origins) ? parsed.origins.filter((origin) => origin && typeof origin.origin === "string") : [];
  return { cookies, origins };
}

/** The cookie domains a state holds, without a leading dot, sorted (GET /profiles/{name}'s `domains`). */
export function cookieDomains(state: BrowserState): string[] {
  return [...new Set(state.cookies.map((cookie) => cookie.domain.replace(/^\./, "")))].sort();
}
