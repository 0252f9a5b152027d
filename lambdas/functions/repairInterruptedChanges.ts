import type { Deps } from "../deps";
import { deployLatestVersion } from "./deployVersion";

export interface RepairReport {
  /** Version and code items no function record points to, removed. */
  orphans: number;
  /** Functions left `deploying` whose latest version was deployed again. */
  redeployed: number;
}

/**
 * Finishes or undoes the creates, updates and deletes that the last stop or crash of the
 * service cut short (local start-up, before it serves): a create writes its version before
 * the record, an update its new version before the record, and a delete removes the record
 * before the versions, so an interrupted one leaves unreferenced versions and code parts
 * (removed here) or a record still `deploying` (its latest version is deployed again).
 * Without this, a version left past the latest would block every later code update.
 */
export async function repairInterruptedChanges(deps: Pick<Deps, "store" | "runtime" | "log">): Promise<RepairReport> {
  const functions = await deps.store.functions.listEverywhere();
  const orphans = await deps.store.versions.removeOrphans(new Map(functions.map((fn) => [fn.function_id, fn.latest_version])));
  let redeployed = 0;
  for (const fn of functions.filter((f) => f.status === "deploying")) {
    await deployLatestVersion(deps, fn);
    redeployed++;
  }
  if (orphans > 0 || redeployed > 0) {
    deps.log(`repaired interrupted changes: removed ${orphans} unreferenced version items, redeployed ${redeployed} functions`);
  }
  return { orphans, redeployed };
}
