import type { Runtime } from "../runtime";

/**
 * The local runtime adapter. Local workers load a version's compiled code from the store
 * when they start, so a deploy has nothing to provision: the version is runnable as soon
 * as it is stored.
 */
export function createLocalRuntime(): Runtime {
  return {
    async deploy() {
      return { status: "active", status_reason: null };
    },
    async remove() {
      // Nothing is held per function until workers exist.
    },
  };
}
