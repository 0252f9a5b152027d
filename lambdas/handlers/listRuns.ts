import { isFunctionId } from "../functions/ids";
import { resolveFunction } from "../functions/resolveFunction";
import { defineRoute } from "../http/defineRoute";
import { json } from "../http/response";
import { decodeRunCursor, encodeRunCursor } from "../runs/list/runCursor";
import { toRunListItem } from "../runs/toRunView";
import { RunListQuery } from "../schemas/querySchemas";

/**
 * GET /runs?function=&status=&trigger=&limit=&cursor=: the account's runs, newest first. A
 * function_id filter is read as it is (another account's id lists nothing, a deleted function's
 * runs are still listed); a name is the caller's function (404 `function_not_found` if none).
 */
export const listRuns = defineRoute({ query: RunListQuery }, async ({ query, principal }, deps) => {
  const accountId = principal.account_id;
  const before = query.cursor === undefined ? undefined : decodeRunCursor(accountId, query.cursor);
  const functionId =
    query.function === undefined ? undefined : isFunctionId(query.function) ? query.function : (await resolveFunction(deps.store, principal, query.function)).function_id;
  const page = await deps.store.runs.list({
    accountId,
    limit: query.limit,
    ...(functionId ? { functionId } : {}),
    ...(query.status ? { status: query.status } : {}),
    ...(query.trigger ? { trigger: query.trigger } : {}),
    ...(before ? { before } : {}),
  });
  return json(200, { items: page.runs.map(toRunListItem), next_cursor: page.lookedTo === null ? null : encodeRunCursor(accountId, page.lookedTo) });
});
