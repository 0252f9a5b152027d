import { AcceptedBatch, BatchRequest, BatchRunList, BatchRunsQuery, BatchView } from "../../schemas/batchSchemas";
import type { RouteSpec } from "../routeSpec";

/** Batches: many runs of a function in one request, followed as one. */
export const BATCH_ROUTES = [
  {
    operationId: "createBatch",
    method: "POST",
    path: "/functions/{ref}/batch",
    summary: "Run a function once per item (1..1000 parameter objects), all checked before any starts; 202 with the batch and its runs' ids",
    tag: "invocations",
    auth: true,
    status: 202,
    body: BatchRequest,
    response: AcceptedBatch,
    responseHeaders: ["Location", "Idempotent-Replayed"],
    headers: ["Idempotency-Key", "X-Function-Version", "x-service-request-origin", "x-service-sdk-version"],
    errors: [
      "invalid_parameters",
      "batch_empty",
      "batch_too_large",
      "function_not_found",
      "version_not_found",
      "function_not_ready",
      "idempotency_key_reused",
      "invocation_quota_exceeded",
    ],
  },
  {
    operationId: "getBatch",
    method: "GET",
    path: "/batches/{batch_id}",
    summary: "A batch: its runs' counts by status, and finished_at once every run has ended",
    tag: "runs",
    auth: true,
    status: 200,
    response: BatchView,
    errors: ["batch_not_found"],
  },
  {
    operationId: "listBatchRuns",
    method: "GET",
    path: "/batches/{batch_id}/runs",
    summary: "A batch's runs in the order of its items (limit 1..1000, default 100; cursor)",
    tag: "runs",
    auth: true,
    status: 200,
    query: BatchRunsQuery,
    response: BatchRunList,
    errors: ["batch_not_found", "invalid_limit"],
  },
] as const satisfies readonly RouteSpec[];
