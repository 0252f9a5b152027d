import { defineRoute } from "../http/defineRoute";
import { json } from "../http/response";
import { cancelRun as cancel } from "../runs/cancel/cancelRun";
import { ownRun } from "../runs/ownRun";
import { toRunView } from "../runs/toRunView";

/** POST /runs/{run_id}/cancel: stops one of the account's runs; 200 with the run as it ended `canceled`. */
export const cancelRun = defineRoute({}, async ({ params, principal }, deps) => json(200, toRunView(await cancel(deps, await ownRun(deps, principal, params.run_id ?? "")))));
