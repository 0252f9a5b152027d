import { submitBatch } from "../batches/submitBatch";
import { defineRoute, readJsonBody } from "../http/defineRoute";

/** POST /functions/{ref}/batch: a run for each item, all checked before any starts; 202 with their ids. */
export const createBatch = defineRoute({}, async (request, deps) => submitBatch(request, deps, readJsonBody(request.event, deps)));
