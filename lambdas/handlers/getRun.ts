import { defineRoute } from "../http/defineRoute";
import { ApiError } from "../http/errors";
import { json } from "../http/response";
import { toRunView } from "../runs/toRunView";

/** GET /runs/{run_id}: one of the account's runs, with its result once it has one. */
export const getRun = defineRoute({}, async ({ params, principal }, deps) => {
  const runId = params.run_id ?? "";
  const run = /^run_[0-9a-z]{26}$/.test(runId) ? await deps.store.runs.get(runId) : undefined;
  if (!run || run.account_id !== principal.account_id) {
    throw new ApiError("run_not_found", `No run '${runId}'`, { run_id: runId });
  }
  return json(200, toRunView(run));
});
