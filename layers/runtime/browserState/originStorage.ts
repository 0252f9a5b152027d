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

/**
 * The path of the empty document an OriginPage shows for an origin: no page of a site is there,
 * so that the user's first navigation from it (a session's first page stays on it after the
 * restore, see puppeteerOrigins) always loads a document, never a same-document jump.
 */
export const RESTORE_PATH = "/.browserfn-profile-restore";

/** In the page: its origin's localStorage and IndexedDB (every database, store and record). */
async function readOrigin(): Promise<{ localStorage: Array<[string, string]>; indexedDB: IndexedDbDatabase[] }> {
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
  return { localStorage: storage, indexedDB: databases };
}

/** In the page: puts a saved origin's localStorage and IndexedDB back. */
async function writeOrigin(saved: { localStorage: Array<[string, string]>; indexedDB: IndexedDbDatabase[] }): Promise<void> {
  for (const [key, value] of saved.localStorage) localStorage.setItem(key, value);
  for (const database of saved.indexedDB) {
    await new Promise<void>((resolve, reject) => {
      const request = indexedDB.open(database.name, Math.max(1, database.version));
      request.onupgradeneeded = () => {
        const db = request.result;
        for (const store of database.stores) {
          if (db.objectStoreNames.contains(store.name)) continue;
          const made = db.createObjectStore(store.name, { keyPath: store.keyPath ?? undefined, autoIncrement: store.autoIncrement });
          for (const index of store.indexes) made.createIndex(index.name, index.keyPath, { unique: index.unique, multiEntry: index.multiEntry });
        }
      };
      request.onerror = () => reject(request.error);
      request.onsuccess = () => {
        const db = request.result;
        const names = database.stores.map((store) => store.name).filter((name) => db.objectStoreNames.contains(name));
        if (names.length === 0) {
          db.close();
          return resolve();
        }
        const tx = db.transaction(names, "readwrite");
        for (const store of database.stores) {
          if (!names.includes(store.name)) continue;
          const target = tx.objectStore(store.name);
          for (const record of store.records) {
            if (store.keyPath === null) target.put(record.value, record.key as IDBValidKey);
            else target.put(record.value);
          }
        }
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

/**
 * The document that puts `saved` back as it loads: the state as JSON in an inert script
 * element (every `<` and non-ASCII character escaped, so the text ends nowhere early and is
 * read the same whatever the charset), then writeOrigin on it, its promise kept for
 * `restored`. The state travels with the document, so the restore costs no script call of its
 * own carrying it. No other script runs in that document: the driver answers it itself.
 */
function restoreDocument(saved: Pick<OriginState, "localStorage" | "indexedDB">): string {
  const json = JSON.stringify(saved).replace(/[<\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  return `${EMPTY_DOCUMENT}<script type="application/json" id="saved">${json}</script><script>window.__browserfnRestored = (${writeOrigin.toString()})(JSON.parse(document.getElementById("saved").textContent));</script>`;
}

/** In the restore document: waits for its writeOrigin (its IndexedDB part is asynchronous), throwing what it threw. */
async function restored(): Promise<void> {
  await (window as unknown as { __browserfnRestored: Promise<void> }).__browserfnRestored;
}

/** True when an origin's saved part holds anything. */
function holdsData(origin: OriginState): boolean {
  return origin.localStorage.length > 0 || origin.indexedDB.length > 0;
}

/**
 * Reads the storage of each origin: in a page already showing it (`openAt`) when there is one,
 * else one after another in one helper page; origins holding nothing are left out.
 */
export async function readOrigins(openPage: () => Promise<OriginPage>, origins: readonly string[], openAt: (origin: string) => OriginPage | undefined): Promise<OriginState[]> {
  const states: OriginState[] = [];
  const read = async (page: OriginPage, origin: string) => {
    await page.visit(origin);
    const found = await page.evaluate(readOrigin, undefined);
    const state: OriginState = { origin, localStorage: found.localStorage, indexedDB: found.indexedDB };
    if (holdsData(state)) states.push(state);
  };
  const elsewhere: string[] = [];
  for (const origin of origins) {
    const open = openAt(origin);
    if (open) await read(open, origin);
    else elsewhere.push(origin);
  }
  if (elsewhere.length === 0) return states;
  const page = await openPage();
  try {
    for (const origin of elsewhere) await read(page, origin);
    return states;
  } finally {
    await page.close().catch(() => undefined);
  }
}

/** True when writeOrigins has anything to put back (else it needs no page). */
export function originsHoldData(origins: readonly OriginState[]): boolean {
  return origins.some(holdsData);
}

/** Puts each saved origin's storage back, in one page (none is opened when no origin holds data): each origin's restore document, loaded. */
export async function writeOrigins(openPage: () => Promise<OriginPage>, origins: readonly OriginState[]): Promise<void> {
  const withData = origins.filter(holdsData);
  if (withData.length === 0) return;
  const page = await openPage();
  try {
    for (const origin of withData) {
      await page.visit(origin.origin, restoreDocument({ localStorage: origin.localStorage, indexedDB: origin.indexedDB }));
      await page.evaluate(restored, undefined);
    }
  } finally {
    await page.close().catch(() => undefined);
  }
}
