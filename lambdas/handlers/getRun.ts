import { defineRoute } from "../http/defineRoute";
import { json } from "../http/response";
import { ownRun } from "../runs/ownRun";
import { toRunView } from "../runs/toRunView";

/** GET /runs/{run_id}: one of the account's runs, with its result once it has one. */
export const getRun = defineRoute({}, async ({ params, principal }, deps) => json(200, toRunView(await ownRun(deps, principal, params.run_id ?? ""))));
