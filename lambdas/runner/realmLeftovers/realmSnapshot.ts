/**
 * What a run changed in the realm it shares with later runs (the Lambda runner, where one warm
 * process serves one invocation after another): globals added, removed or replaced, properties
 * of the builtins and their prototypes patched (JSON.stringify, Array.prototype.map, …),
 * environment variables, and timers of the automation still pending, unref'd ones too.
 * A local worker needs none of this: its process serves one run (see hostMain).
 *
 * The functions used to compare are taken when this module loads, before any user code, so a
 * run that patches Object.getOwnPropertyDescriptor or Reflect cannot hide its changes with them.
 */
import { pendingUserTimers } from "../userTimers";

const ownKeys = Reflect.ownKeys;
const describe = Object.getOwnPropertyDescriptor;
const apply = Reflect.apply;
const same = Object.is;
const define = Object.defineProperty;
const stringify = JSON.stringify;
const toText = String;
const split = String.prototype.split;

/** Objects whose own properties a run must leave as it found them. */
function watched(): Array<[string, object]> {
  const g = globalThis as unknown as Record<string, object>;
  const roots: Array<[string, object | undefined]> = [
    ["globalThis", globalThis],
    ["process", process],
    ["console", console],
    ["JSON", JSON],
    ["Math", Math],
    ["Reflect", Reflect],
    ["Buffer", Buffer],
  ];
  for (const name of ["Object", "Function", "Array", "String", "Number", "Boolean", "Symbol", "BigInt", "Promise", "RegExp", "Date", "Error", "TypeError", "Map", "Set", "WeakMap", "WeakSet", "ArrayBuffer", "Uint8Array", "URL", "URLSearchParams", "Headers", "Request", "Response", "TextEncoder", "TextDecoder", "AbortController", "EventTarget"]) {
    const value = g[name] as { prototype?: object } | undefined;
    roots.push([name, value], [`${name}.prototype`, value?.prototype]);
  }
  roots.push(["Buffer.prototype", Buffer.prototype], ["TypedArray.prototype", Object.getPrototypeOf(Uint8Array.prototype) as object]);
  return roots.filter((root): root is [string, object] => root[1] !== undefined);
}

interface Entry {
  key: string | symbol;
  value: unknown;
  get: unknown;
  set: unknown;
}

export interface RealmSnapshot {
  objects: Array<{ name: string; target: object; entries: Entry[] }>;
  env: string;
}

/**
 * Own properties of `process` that Node itself changes as listeners come and go (puppeteer adds
 * some when the runner launches its browser): a run's listeners on process are not watched here
 * (the Lambda runner has no channel on process for them to read).
 */
const NODE_OWNED = ["_events", "_eventsCount", "_maxListeners", "exitCode"];

function entriesOf(target: object): Entry[] {
  const keys = ownKeys(target);
  const entries: Entry[] = [];
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string | symbol;
    if (target === process && typeof key === "string" && NODE_OWNED.includes(key)) continue;
    const descriptor = describe(target, key);
    // Defined, not assigned: an index setter a run puts on Array.prototype is not called.
    define(entries, entries.length, { value: { key, value: descriptor?.value, get: descriptor?.get, set: descriptor?.set }, writable: true, enumerable: true, configurable: true });
  }
  return entries;
}

/**
 * Node's lazy globals (`FormData`, `fetch`, `WebSocket`, …) are getters that, on first use,
 * replace themselves with a data property holding what they load: a run that merely uses one
 * would look like a change. They are loaded before the snapshot is taken.
 */
function loadLazyGlobals(): void {
  const keys = ownKeys(globalThis);
  for (let i = 0; i < keys.length; i++) {
    const descriptor = describe(globalThis, keys[i] as string | symbol);
    if (!descriptor?.get || !descriptor.configurable) continue;
    try {
      apply(descriptor.get, globalThis, []);
    } catch {
      // A getter that throws stays a getter: compared as it is.
    }
  }
}

/** The realm as it is now: take it before any user code runs. */
export function takeRealmSnapshot(): RealmSnapshot {
  loadLazyGlobals();
  return {
    objects: watched().map(([name, target]) => ({ name, target, entries: entriesOf(target) })),
    env: stringify(process.env),
  };
}

/**
 * Names what differs from `snapshot` (empty when nothing does): a realm that must not serve
 * another run. Built without the methods a run may patch (no Map, no iterators, no push: a
 * setter a run puts on Array.prototype cannot swallow a change), and nested loops are cheap
 * for the few hundred properties watched.
 */
export function realmChanges(snapshot: RealmSnapshot): string[] {
  let report = "";
  const note = (line: string) => (report = report === "" ? line : `${report}\n${line}`);
  for (let o = 0; o < snapshot.objects.length; o++) {
    const { name, target, entries } = snapshot.objects[o] as RealmSnapshot["objects"][number];
    const now = entriesOf(target);
    for (let i = 0; i < now.length; i++) {
      const entry = now[i] as Entry;
      let old: Entry | undefined;
      for (let j = 0; j < entries.length && !old; j++) if ((entries[j] as Entry).key === entry.key) old = entries[j];
      if (!old) note(`${name}.${toText(entry.key)} added`);
      else if ((!same(old.value, entry.value) || old.get !== entry.get || old.set !== entry.set)) note(`${name}.${toText(entry.key)} replaced`);
    }
    for (let j = 0; j < entries.length; j++) {
      const key = (entries[j] as Entry).key;
      let found = false;
      for (let i = 0; i < now.length && !found; i++) found = (now[i] as Entry).key === key;
      if (!found) note(`${name}.${toText(key)} removed`);
    }
  }
  if (apply(stringify, JSON, [process.env]) !== snapshot.env) note("process.env changed");
  const timers = pendingUserTimers();
  if (timers > 0) note(`${timers} timer${timers === 1 ? "" : "s"} of the automation pending`);
  return report === "" ? [] : (apply(split, report, ["\n"]) as string[]);
}
