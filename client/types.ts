/**
 * Request and response types of the browserfn API. Where the server has a zod schema
 * (`lambdas/schemas/*`, the source of the OpenAPI document too) the type is inferred from it.
 * Every import here is type-only: the client loads neither zod nor any server module at run time.
 */
import type { z } from "zod";
import type { Plan } from "../lambdas/config/plans";
import type { ErrorCode } from "../lambdas/http/errors";
import type { RunStatus } from "../lambdas/runs/types";
import type {
  CreateFunctionBody as CreateFunctionSchema,
  ForkFunctionBody as ForkFunctionSchema,
  FunctionList as FunctionListSchema,
  FunctionRecord as FunctionRecordSchema,
  ParameterInfo as ParameterInfoSchema,
  UpdateFunctionBody as UpdateFunctionSchema,
  VersionCode as VersionCodeSchema,
  VersionList as VersionListSchema,
} from "../lambdas/schemas/functionSchemas";
import type {
  ApiKeyInfo as ApiKeyInfoSchema,
  ApiKeyList as ApiKeyListSchema,
  CreateApiKeyBody as CreateApiKeySchema,
  CreatedApiKey as CreatedApiKeySchema,
} from "../lambdas/schemas/keySchemas";
import type { ErrorBody as ErrorBodySchema } from "../lambdas/schemas/errorSchemas";
import type { Artifact as ArtifactSchema, ArtifactList as ArtifactListSchema } from "../lambdas/schemas/artifactSchemas";
import type {
  AcceptedRun as AcceptedRunSchema,
  LogEntry as LogEntrySchema,
  LogList as LogListSchema,
  RunList as RunListSchema,
  RunView as RunSchema,
} from "../lambdas/schemas/runSchemas";
import type {
  AcceptedBatch as AcceptedBatchSchema,
  BatchRun as BatchRunSchema,
  BatchRunList as BatchRunListSchema,
  BatchView as BatchSchema,
} from "../lambdas/schemas/batchSchemas";
import type { SecretInfo as SecretInfoSchema, SecretList as SecretListSchema } from "../lambdas/schemas/secretSchemas";
import type { ProfileInfoView as ProfileInfoSchema, ProfileList as ProfileListSchema } from "../lambdas/profiles/profileSchemas";
import type {
  AccountPlan as AccountPlanSchema,
  FunctionMetrics as FunctionMetricsSchema,
  UsageCounters as UsageCountersSchema,
  UsageReport as UsageReportSchema,
} from "../lambdas/schemas/usageSchemas";

/** The API's error codes, a plan's limits, and a run's status words, as the server defines them. */
export type { ErrorCode, Plan, RunStatus };

/** Body of `POST /functions`. */
export type CreateFunctionInput = z.input<typeof CreateFunctionSchema>;
/** Body of `PATCH /functions/{ref}`: any create field but `name`; `schedule: null` removes the schedule. */
export type UpdateFunctionInput = z.input<typeof UpdateFunctionSchema>;
/** Body of `POST /functions/{function_id}/fork`. */
export type ForkFunctionInput = z.input<typeof ForkFunctionSchema>;
/** One parameter of a function's automation (`variables`). */
export type ParameterInfo = z.infer<typeof ParameterInfoSchema>;
/** The function record returned by create, info, update and fork. */
export type FunctionRecord = z.infer<typeof FunctionRecordSchema>;
/** One page of `GET /functions`. */
export type FunctionList = z.infer<typeof FunctionListSchema>;
/** One item of `GET /functions`. */
export type FunctionListItem = FunctionList["items"][number];
/** `GET /functions/{ref}/versions`. */
export type VersionList = z.infer<typeof VersionListSchema>;
/** One version with its source, `GET /functions/{ref}/versions/{version}`. */
export type VersionCode = z.infer<typeof VersionCodeSchema>;
/** Body of `POST /api-keys`. */
export type CreateApiKeyInput = z.input<typeof CreateApiKeySchema>;
/** A key as listed (never the secret). */
export type ApiKeyInfo = z.infer<typeof ApiKeyInfoSchema>;
/** `GET /api-keys`. */
export type ApiKeyList = z.infer<typeof ApiKeyListSchema>;
/** A new key, with its secret `key` (shown only once). */
export type CreatedApiKey = z.infer<typeof CreatedApiKeySchema>;
/** One secret of a function, as listed: its name and when it was set (never its value). */
export type SecretInfo = z.infer<typeof SecretInfoSchema>;
/** `GET /functions/{ref}/secrets`. */
export type SecretList = z.infer<typeof SecretListSchema>;
/** One profile (GET /profiles/{name}): its size, last save and cookie domains; its state never leaves the service. */
export type ProfileInfo = z.infer<typeof ProfileInfoSchema>;
export type ProfileList = z.infer<typeof ProfileListSchema>;
/** The one error body of every failed request. */
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

/** One run, `GET /runs/{run_id}`; `result` is the automation's return value once it succeeded. */
export type Run = z.infer<typeof RunSchema>;
/** `GET /runs`: a page of the account's runs, newest first, and the cursor of the next one. */
export type RunList = z.infer<typeof RunListSchema>;
/** One run as `GET /runs` lists it (GET /runs/{run_id} has its params, result and logs). */
export type RunListItem = RunList["items"][number];
/** The filters and page of `GET /runs` (`function`: a name or a function_id). */
export interface ListRunsQuery {
  function?: string;
  status?: RunStatus;
  trigger?: Run["trigger"];
  limit?: number;
  cursor?: string;
}
/** One entry of `GET /functions/{ref}/logs` (newest first). */
export type LogEntry = z.infer<typeof LogEntrySchema>;
/** `GET /functions/{ref}/logs`. */
export type LogList = z.infer<typeof LogListSchema>;

/** One file a run kept (`artifacts.save`, or a failed run's screenshots and HTML); `name` is a file name, never a path. */
export type Artifact = z.infer<typeof ArtifactSchema>;
/** `GET /runs/{run_id}/artifacts`, in name order. */
export type ArtifactList = z.infer<typeof ArtifactListSchema>;
/** An artifact's content, `GET /runs/{run_id}/artifacts/{name}`. */
export interface ArtifactContent {
  /** The answer's `Content-Type` (`application/octet-stream` when it has none). */
  contentType: string;
  bytes: Uint8Array;
}

/** 202 answer of an invocation that goes on in the background. */
export type AcceptedRun = z.infer<typeof AcceptedRunSchema>;

/** 202 answer of `POST /functions/{ref}/batch`: the batch and its runs' ids, in the order of the items. */
export type AcceptedBatch = z.infer<typeof AcceptedBatchSchema>;
/** `GET /batches/{batch_id}`: counts by status, and finished_at once every run has ended. */
export type Batch = z.infer<typeof BatchSchema>;
/** One run of `GET /batches/{batch_id}/runs`. */
export type BatchRun = z.infer<typeof BatchRunSchema>;
/** One page of `GET /batches/{batch_id}/runs`, in the order of the items. */
export type BatchRunList = z.infer<typeof BatchRunListSchema>;

/** `GET /functions/{ref}/metrics`; durations in ms, `success_rate` in percent (0–100). */
export type FunctionMetrics = z.infer<typeof FunctionMetricsSchema>;
/** Metered usage counters of `GET /usage`. */
export type UsageCounters = z.infer<typeof UsageCountersSchema>;
/** `GET /usage?month=YYYY-MM`: the account's usage in a month, its plan's limits and what remains. */
export type Usage = z.infer<typeof UsageReportSchema>;
/** `PUT /accounts/{account}/plan` (admin keys only). */
export type AccountPlan = z.infer<typeof AccountPlanSchema>;
