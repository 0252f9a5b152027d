import type { Deps } from "../deps";
import { ApiError } from "../http/errors";
import type { Principal } from "../identity/identity";
import { resolveFunction } from "./resolveFunction";

/** Deletes the record (the commit point), then its versions, its secrets and what the runtime holds. */
export async function deleteFunction(deps: Deps, principal: Principal, ref: string): Promise<void> {
  const fn = await resolveFunction(deps.store, principal, ref);
  if (!(await deps.store.functions.delete(fn))) {
    throw new ApiError("function_not_found", `No function named '${ref}'`, { ref });
  }
  await deps.scheduler.remove(fn);
  await deps.store.versions.deleteAll(fn.function_id);
  await deps.store.secrets.removeAll(fn.function_id);
  await deps.runtime.remove(fn);
}
