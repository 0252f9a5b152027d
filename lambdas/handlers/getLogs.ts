import { resolveFunction } from "../functions/resolveFunction";
import { defineRoute } from "../http/defineRoute";
import { parseLimit } from "../http/limit";
import { json } from "../http/response";
import { toLogEntry } from "../runs/toRunView";

/** GET /functions/{ref}/logs?limit=N: the latest runs, newest first. */
export const getLogs = defineRoute({}, async ({ params, principal, event }, deps) => {
  const limit = parseLimit(event.queryStringParameters?.limit, 50, 1000);
  const fn = await resolveFunction(deps.store, principal, params.ref ?? "");
  const runs = await deps.store.runs.recent(fn.function_id, limit);
  return json(200, { items: runs.map(toLogEntry) });
});
