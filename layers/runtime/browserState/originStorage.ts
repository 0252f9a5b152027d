import { createHash } from "node:crypto";
import type { IndexedDbDatabase, OriginState } from "./browserState";

/**
 * A page the state layer may point at any origin without touching the network (the driver
 * answers its navigations itself with an empty document) and evaluate script in. Each driver
 * gives one (see puppeteerOrigins.ts); the state layer never sees the driver.
 */
export interface OriginPage {
  /** Shows `html` (default: an empty document) as the document of `origin` at RESTORE_PATH (no request leaves the browser). */
  visit(origin: string, html?: string): Promise<void>;
  /** Runs `fn(arg)` in the page and gives its JSON result. */
  evaluate<A, R>(fn: (arg: A) => R | Promise<R>, arg: A): Promise<R>;
  close(): Promise<void>;
}

/** The path of the empty document an OriginPage shows for an origin (no page of a site is there). */
export const RESTORE_PATH = "/.browserfn-profile-restore";

/** What an origin's page reads: its storage, or word that it is the storage as opened. */
export type OriginRead = { origin: string } & ({ same: true } | { same?: undefined; localStorage: Array<[string, string]>; indexedDB: IndexedDbDatabase[] });

/**
 * In the page: its origin's localStorage and IndexedDB (every database, store and record). With
 * `opened` (the SHA-256 of that storage's JSON text as the profile opened it: openedDigest),
 * storage that is still the same is only said to be (`{ same: true }`), not sent back again:
 * where the page has `crypto.subtle` (a secure context, such as https or 127.0.0.1).
 */
async function readOrigin(opened: string | null): Promise<OriginRead> {
  // The document's own origin (a page cannot redefine location), read first: a
  // document that navigates away meanwhile ends this evaluation with it.
  const origin = location.origin;
  const done = <T>(request: IDBRequest<T>) =>
    new Promise<T>((resolve, reject) => {
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });
  const storage: Array<[string, string]> = [];
  for (let i = 0; i < localStorage.length; i++) {
    const key = localStorage.key(i);
    if (key !== null) storage.push([key, localStorage.getItem(key) ?? ""]);
  }
  const databases: IndexedDbDatabase[] = [];
  for (const info of await indexedDB.databases()) {
    if (!info.name) continue;
    const db = await done(indexedDB.open(info.name));
    const stores: IndexedDbDatabase["stores"] = [];
    for (const storeName of Array.from(db.objectStoreNames)) {
      const store = db.transaction(storeName, "readonly").objectStore(storeName);
      const [keys, values] = await Promise.all([done(store.getAllKeys()), done(store.getAll())]);
      stores.push({
        name: storeName,
        keyPath: store.keyPath,
        autoIncrement: store.autoIncrement,
        indexes: Array.from(store.indexNames).map((indexName) => {
          const index = store.index(indexName);
          return { name: indexName, keyPath: index.keyPath, unique: index.unique, multiEntry: index.multiEntry };
        }),
        records: values.map((value, i) => (store.keyPath === null ? { key: keys[i], value } : { value })),
      });
    }
    db.close();
    databases.push({ name: info.name, version: info.version ?? db.version, stores });
  }
  // In one order whatever the browser's (its localStorage keys come in no fixed order), so that an unchanged state reads back the same.
  const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  storage.sort(([a], [b]) => byName(a, b));
  databases.sort((a, b) => byName(a.name, b.name));
  const found = { localStorage: storage, indexedDB: databases };
  if (opened !== null && globalThis.crypto?.subtle) {
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(JSON.stringify(found))));
    if (Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("") === opened) return { same: true, origin };
  }
  return { ...found, origin };
}

/**
 * The digest readOrigin compares `origin`'s storage with: SHA-256 (hex) of its JSON text as the
 * page writes it, as `opened` holds it; null where `opened` does not hold it.
 */
function openedDigest(origin: string, opened: ReadonlyMap<string, OriginState>): string | null {
  const known = opened.get(origin);
  return known ? createHash("sha256").update(JSON.stringify({ localStorage: known.localStorage, indexedDB: known.indexedDB })).digest("hex") : null;
}

/**
 * Script in the page, its argument and its answer passed as JSON text: Playwright's own
 * serialization of a 100 KB argument or answer (value by value) costs several times the
 * page's JSON.parse. Evaluated as an expression (DevTools evaluation, which a page's CSP does
 * not block), so no `eval` runs in the page.
 */
export function jsonCall(fn: (arg: never) => unknown, arg: unknown): string {
  return `(async () => JSON.stringify((await (${fn.toString()})(JSON.parse(${JSON.stringify(JSON.stringify(arg ?? null))}))) ?? null))()`;
}

/** An OriginRead from the JSON text a page gave (a site's page may answer anything): undefined unless it has the shape. */
export function parseOriginRead(text: string): OriginRead | undefined {
  let found: unknown;
  try {
    found = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof found !== "object" || found === null) return undefined;
  const read = found as Record<string, unknown>;
  if (typeof read.origin !== "string") return undefined;
  if (read.same === true) return { same: true, origin: read.origin };
  return Array.isArray(read.localStorage) && Array.isArray(read.indexedDB) ? { origin: read.origin, localStorage: read.localStorage, indexedDB: read.indexedDB } : undefined;
}

/**
 * A CDP expression that reads the storage of the document it is evaluated in (readOrigin, as
 * JSON text), compared with the opened digest of `origin` when `opened` holds it. The caller
 * evaluates it in one execution context whose origin the browser reported (never the page's
 * own word for where it is).
 */
export function readOriginExpression(origin: string, opened: ReadonlyMap<string, OriginState>): string {
  return jsonCall(readOrigin, openedDigest(origin, opened));
}

/**
 * In the page: puts a saved origin's localStorage and IndexedDB back. A database the origin does
 * not have yet gets its stores and records in its upgrade transaction, which every later open of
 * it (the site's own) waits for: the site never reads it half written.
 */
export async function writeOrigin(saved: { localStorage: Array<[string, string]>; indexedDB: IndexedDbDatabase[] }): Promise<void> {
  for (const [key, value] of saved.localStorage) localStorage.setItem(key, value);
  const put = (target: IDBObjectStore, store: IndexedDbDatabase["stores"][number]) => {
    for (const record of store.records) {
      if (store.keyPath === null) target.put(record.value, record.key as IDBValidKey);
      else target.put(record.value);
    }
  };
  for (const database of saved.indexedDB) {
    await new Promise<void>((resolve, reject) => {
      const request = indexedDB.open(database.name, Math.max(1, database.version));
      const filled: string[] = [];
      request.onupgradeneeded = () => {
        const db = request.result;
        for (const store of database.stores) {
          if (db.objectStoreNames.contains(store.name)) continue;
          const made = db.createObjectStore(store.name, { keyPath: store.keyPath ?? undefined, autoIncrement: store.autoIncrement });
          for (const index of store.indexes) made.createIndex(index.name, index.keyPath, { unique: index.unique, multiEntry: index.multiEntry });
          put(made, store);
          filled.push(store.name);
        }
      };
      request.onerror = () => reject(request.error);
      request.onsuccess = () => {
        const db = request.result;
        // A later open asking for a newer version is not held up by this one.
        db.onversionchange = () => db.close();
        const rest = database.stores.filter((store) => !filled.includes(store.name) && db.objectStoreNames.contains(store.name));
        if (rest.length === 0) {
          db.close();
          return resolve();
        }
        const tx = db.transaction(
          rest.map((store) => store.name),
          "readwrite",
        );
        for (const store of rest) put(tx.objectStore(store.name), store);
        tx.oncomplete = () => {
          db.close();
          resolve();
        };
        tx.onerror = () => reject(tx.error);
      };
    });
  }
}

/** The empty document an OriginPage shows by default. */
export const EMPTY_DOCUMENT = "<!doctype html><title></title>";

/** True when an origin's saved part holds anything. */
function holdsData(origin: OriginState): boolean {
  return origin.localStorage.length > 0 || origin.indexedDB.length > 0;
}

/**
 * Reads the storage of each origin: in a page already showing it (`openAt`) when there is one,
 * else one after another in one helper page; origins holding nothing are left out. An origin
 * in `opened` whose storage is still as opened is not sent back by its page: its opened state is
 * used (a 100 KB origin costs a few hundred bytes on the pipe instead of its whole storage).
 */
export async function readOrigins(
  openPage: () => Promise<OriginPage>,
  origins: readonly string[],
  openAt: (origin: string) => OriginPage | undefined,
  opened: ReadonlyMap<string, OriginState> = new Map(),
  readAlready: ReadonlyMap<string, OriginRead> = new Map(),
): Promise<OriginState[]> {
  const states: OriginState[] = [];
  /** Keeps what a document of `origin` read; false when the document was not of that origin (it navigated, or says so falsely). */
  const keep = (origin: string, found: OriginRead): boolean => {
    if (found.origin !== origin) return false;
    // "The same" comes only where a digest was given, that is, where the origin was opened.
    const state = found.same ? opened.get(origin) : { origin, localStorage: found.localStorage, indexedDB: found.indexedDB };
    if (state && holdsData(state)) states.push(state);
    return true;
  };
  const read = async (page: OriginPage, origin: string): Promise<boolean> => {
    await page.visit(origin);
    return keep(origin, await page.evaluate(readOrigin, openedDigest(origin, opened)));
  };
  const elsewhere: string[] = [];
  for (const origin of origins) {
    const found = readAlready.get(origin);
    const open = found ? undefined : openAt(origin);
    // A page of the site that shows another origin by the time it is read is not read for this one: a page of the session's own reads it.
    if (found ? keep(origin, found) : open && (await read(open, origin).catch(() => false))) continue;
    elsewhere.push(origin);
  }
  if (elsewhere.length === 0) return states;
  const page = await openPage();
  try {
    for (const origin of elsewhere) {
      if (!(await read(page, origin))) throw new Error(`the profile's storage of ${origin} could not be read`);
    }
    return states;
  } finally {
    await page.close().catch(() => undefined);
  }
}

/** The saved origins that hold anything to put back. */
export function originsWithData(origins: readonly OriginState[]): OriginState[] {
  return origins.filter(holdsData);
}
