/**
 * Closes the ways JavaScript in a worker could read its heap, where the runtime's channel token
 * lives (see takeChannel). Node's permission model, which the worker runs under, already refuses
 * `process.binding`, the inspector, native addons, child processes, threads and writing files;
 * what it leaves is `node:v8`: a heap snapshot (every string of the heap, the token among them)
 * and `setFlagsFromString` (`--allow-natives-syntax` would open V8's internals to `%` calls).
 * Those functions of the module are replaced, for `require` and `import()` alike (Node builds the
 * module's ES namespace from these same exports on first import), before user code loads.
 */
const REFUSED = ["getHeapSnapshot", "writeHeapSnapshot", "setHeapSnapshotNearHeapLimit", "setFlagsFromString"] as const;

export function closeHeapReaders(): void {
  const v8 = process.getBuiltinModule("v8") as unknown as Record<string, unknown>;
  for (const name of REFUSED) {
    const refuse = () => {
      throw new Error(`v8.${name} is not available to automations`);
    };
    Object.defineProperty(v8, name, { value: refuse, writable: false, configurable: false, enumerable: true });
  }
}
