import { resolveFunction } from "../functions/resolveFunction";
import { toRecord } from "../functions/toRecord";
import { defineRoute } from "../http/defineRoute";
import { json } from "../http/response";

/** GET /functions/{ref}/info: one record; another account's only by function_id and when shared. */
export const getFunctionInfo = defineRoute({}, async ({ params, principal, baseUrl }, deps) => {
  const fn = await resolveFunction(deps.store, principal, params.ref ?? "", true);
  return json(200, toRecord(fn, baseUrl));
});
