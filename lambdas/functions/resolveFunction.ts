import { ApiError } from "../http/errors";
import type { Principal } from "../identity/identity";
import type { Store } from "../store/store";
import { NAME_PATTERN } from "../schemas/functionSchemas";
import { isFunctionId } from "./ids";
import type { FunctionItem } from "./types";

/**
 * Finds a function by name (in the caller's account) or by function_id. Another
 * account's function is found only by id, only when it is shared and `allowShared` is set;
 * otherwise it does not exist for the caller (404, never 403, so ids do not leak).
 */
export async function resolveFunction(
  store: Store,
  principal: Principal,
  ref: string,
  allowShared = false,
): Promise<FunctionItem> {
  // A ref that is neither an id nor a valid name names nothing (and may be too long for a key).
  const fn = isFunctionId(ref)
    ? await store.functions.getById(ref)
    : NAME_PATTERN.test(ref)
      ? await store.functions.getByName(principal.account_id, ref)
      : undefined;
  const visible = fn && (fn.account_id === principal.account_id || (allowShared && fn.shared));
  if (!visible) throw new ApiError("function_not_found", `No function named '${ref}'`, { ref });
  return fn;
}
