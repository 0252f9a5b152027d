import { resolveFunction } from "../functions/resolveFunction";
import { toRecord } from "../functions/toRecord";
import { defineRoute } from "../http/defineRoute";
import { json } from "../http/response";

/** GET /functions/{ref}/info: one record; another account's only by function_id and when shared (without its webhooks, schedule parameters, proxy or profiles). */
export const getFunctionInfo = defineRoute({}, async ({ params, principal, baseUrl }, deps) => {
  const fn = await resolveFunction(deps.store, principal, params.ref ?? "", true);
  const record = toRecord(fn, baseUrl);
  // Where another account's runs are reported, and what its schedule passes, are its own business.
  if (fn.account_id !== principal.account_id) {
    record.webhooks = [];
    record.schedule_params = null;
    // Its proxy (server, user) and the profiles it opens are its own too.
    record.proxy = null;
    record.profiles = [];
  }
  return json(200, record);
});
