import { batchStatus, ownBatch } from "../batches/batchStatus";
import { defineRoute } from "../http/defineRoute";
import { json } from "../http/response";

/** GET /batches/{batch_id}: the batch's counts by status, and finished_at once every run has ended. */
export const getBatch = defineRoute({}, async ({ params, principal, baseUrl }, deps) =>
  json(200, await batchStatus(deps, await ownBatch(deps, principal, params.batch_id ?? ""), baseUrl)),
);
