import { resolveFunction } from "../functions/resolveFunction";
import { defineRoute } from "../http/defineRoute";
import { json } from "../http/response";
import { toLogEntry } from "../runs/toRunView";
import { LogsQuery } from "../schemas/querySchemas";

/** GET /functions/{ref}/logs?limit=N: the latest runs, newest first. */
export const getLogs = defineRoute({ query: LogsQuery }, async ({ params, principal, query }, deps) => {
  const fn = await resolveFunction(deps.store, principal, params.ref ?? "");
  const runs = await deps.store.runs.recent(fn.function_id, query.limit);
  return json(200, { items: runs.map(toLogEntry) });
});
