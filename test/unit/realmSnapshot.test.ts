import { realmChanges, takeRealmSnapshot } from "../../lambdas/runner/realmLeftovers/realmSnapshot";
import { userTimers } from "../../lambdas/runner/userTimers";

type Loose = Record<string | symbol, unknown>;

describe("realmChanges", () => {
  it("is empty for a realm as it was", () => {
    const snapshot = takeRealmSnapshot();
    expect(realmChanges(snapshot)).toEqual([]);
  });

  it("takes a lazy global that loaded itself on first use (as Node's FormData and fetch do) for no change, and one a run replaced for a change", () => {
    const loaded = { lazy: true };
    const lazy = (name: string) =>
      Object.defineProperty(globalThis, name, {
        configurable: true,
        enumerable: false,
        get() {
          Object.defineProperty(globalThis, name, { value: loaded, writable: true, configurable: true, enumerable: false });
          return loaded;
        },
        set(value: unknown) {
          Object.defineProperty(globalThis, name, { value, writable: true, configurable: true, enumerable: false });
        },
      });
    lazy("__bfnLazyUsed");
    lazy("__bfnLazyReplaced");
    try {
      const snapshot = takeRealmSnapshot();
      expect((globalThis as unknown as Loose).__bfnLazyUsed).toBe(loaded); // a run used it
      (globalThis as unknown as Loose).__bfnLazyReplaced = { forged: true }; // a run replaced it
      expect(realmChanges(snapshot)).toEqual(["globalThis.__bfnLazyReplaced replaced"]);
    } finally {
      delete (globalThis as unknown as Loose).__bfnLazyUsed;
      delete (globalThis as unknown as Loose).__bfnLazyReplaced;
    }
  });

  it("names globals added and removed, builtins replaced, environment variables and pending timers (unref'd too)", () => {
    const snapshot = takeRealmSnapshot();
    const stringify = JSON.stringify;
    const queueMicrotask = globalThis.queueMicrotask;
    const timer = userTimers.setTimeout(() => undefined, 60_000);
    try {
      timer.unref();
      (globalThis as unknown as Loose).leftover = 1;
      delete (globalThis as unknown as Loose).queueMicrotask;
      JSON.stringify = ((value: unknown) => stringify(value)) as typeof JSON.stringify;
      process.env.LEFTOVER_PROBE = "1";
      expect(realmChanges(snapshot).sort()).toEqual(
        ["1 timer of the automation pending", "JSON.stringify replaced", "globalThis.leftover added", "globalThis.queueMicrotask removed", "process.env changed"].sort(),
      );
    } finally {
      JSON.stringify = stringify;
      globalThis.queueMicrotask = queueMicrotask;
      delete (globalThis as unknown as Loose).leftover;
      delete process.env.LEFTOVER_PROBE;
      userTimers.clearTimeout(timer);
    }
    expect(realmChanges(snapshot)).toEqual([]);
  });

  it("is not fooled by a run that patches the functions it would compare with, or an array setter", () => {
    const snapshot = takeRealmSnapshot();
    const ownKeys = Reflect.ownKeys;
    const describe = Object.getOwnPropertyDescriptor;
    try {
      // Each lie hides nothing: the comparison took its functions when it loaded.
      Reflect.ownKeys = () => [];
      Object.getOwnPropertyDescriptor = () => undefined;
      Object.defineProperty(Array.prototype, "0", { set: () => undefined, get: () => undefined, configurable: true });
      Object.defineProperty(Array.prototype, "1", { set: () => undefined, get: () => undefined, configurable: true });
      const changes = realmChanges(snapshot);
      delete (Array.prototype as unknown as Loose)["0"];
      delete (Array.prototype as unknown as Loose)["1"];
      expect(changes).toEqual(expect.arrayContaining(["Reflect.ownKeys replaced", "Object.getOwnPropertyDescriptor replaced", "Array.prototype.0 added", "Array.prototype.1 added"]));
    } finally {
      Reflect.ownKeys = ownKeys;
      Object.getOwnPropertyDescriptor = describe;
      delete (Array.prototype as unknown as Loose)["0"];
      delete (Array.prototype as unknown as Loose)["1"];
      (Array.prototype as unknown[]).length = 0; // Array.prototype is an array: its indexes grew it
    }
    expect(realmChanges(snapshot)).toEqual([]);
  });
});
