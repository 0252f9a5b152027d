import type { ParameterInfo, ParameterStyle } from "../code/extractParameters";
import type { Webhook } from "../webhooks/webhookTypes";
import type { InputSchema, JsonSchema } from "../code/jsonSchema";
import type { Warning } from "../code/warnings";
import type { RetrySettings } from "../retries/retrySettings";
import type { RecordingMode } from "../recording/recordingMode";
import type { ProxySettings } from "../proxy/proxySettings";

export type FunctionStatus = "deploying" | "active" | "failed";

/** A function record as stored (one item per function, keyed by account + name). */
export interface FunctionItem {
  account_id: string;
  function_id: string;
  name: string;
  description: string | null;
  status: FunctionStatus;
  status_reason: string | null;
  latest_version: number;
  variables: ParameterInfo[] | null;
  /** The latest version's input schema (records written before schemas existed have none: see inputSchemaOf). */
  input_schema?: InputSchema;
  /**
   * The latest version's declared return type as JSON Schema (internal: MCP's outputSchema; `{}`
   * when undeclared; records written before it have none).
   */
  output_schema?: JsonSchema;
  /** The latest version's code warnings (see findUnawaitedReturns; records stored before them have none: []). */
  warnings?: Warning[];
  schedule: string | null;
  schedule_timezone: string;
  /** Parameters of scheduled runs (the automation's defaults fill the rest). */
  schedule_params: Record<string, unknown> | null;
  next_run_at: string | null;
  timeout_seconds: number;
  memory_mb: number;
  shared: boolean;
  /** How failed runs of async calls, schedules and batches are retried (null or absent: never; records stored before retries have none). */
  retries?: RetrySettings | null;
  /** Which runs keep recordings of their pages (absent: the default, "failures"; lambdas/recording). */
  recording?: RecordingMode;
  /** The proxy every browser session of its runs goes through (null or absent: none). */
  proxy?: ProxySettings | null;
  /** Profiles its runs may open by a computed name, besides those its code names literally (absent: none). */
  profiles?: string[];
  reference_workflow_id: string | null;
  /** Where the ends of its runs are POSTed ([] when none; records stored before webhooks have none). */
  webhooks: Webhook[];
  /**
   * The webhook signing secret, sealed by the SecretBox for webhookSecretContext(function_id)
   * (internal: never in a record or a log). Absent until webhooks are first set.
   */
  webhook_secret_sealed?: string | null;
  /**
   * True once a secret was set (internal): only then does a run read the function's secrets
   * (one store read less per invocation of every other function). Never cleared: a flag that
   * a concurrent set could race with would leave a secret unredacted.
   */
  has_secrets?: boolean;
  /**
   * The deploy under way or last started (internal): a new one each time the record becomes
   * `deploying`. Its deploy job carries it and stops, recording nothing, once the record holds
   * another (see runDeployJob). Records written before it have none.
   */
  deploy_id?: string;
  created_at: string;
  updated_at: string;
  /** SHA-256 of the latest version's source (internal: an identical deploy adds no version). */
  code_sha256: string;
  /** Incremented by every write (internal: optimistic concurrency). */
  revision: number;
}

/** One immutable version of a function's code. */
export interface VersionItem {
  function_id: string;
  version: number;
  created_at: string;
  code_sha256: string;
  variables: ParameterInfo[];
  /** How the automation takes its parameters (versions stored before this field: positional). */
  parameter_style?: ParameterStyle;
  /** The parameters' JSON Schema, derived at deploy (versions stored before it have none: see inputSchemaOf). */
  input_schema?: InputSchema;
  /** The declared return type's JSON Schema (`{}` when undeclared; absent on versions stored before it). */
  output_schema?: JsonSchema;
  /** What compileCode warned of in this version's code ([] when nothing; absent on versions stored before it). */
  warnings?: Warning[];
  /** The profile names its code passes literally to Session.start, found at deploy (absent on versions stored before profiles). */
  profile_names?: string[];
  /** Of `profile_names`, those its code may open with `persist` (found at deploy; the AWS pipeline leases them before each run). */
  profile_writes?: string[];
}

/** A version together with its code (source as uploaded, JS compiled at deploy time). */
export interface VersionWithCode extends VersionItem {
  source: string;
  js: string;
}

/** The settings a create or update may change. */
export type FunctionSettings = Pick<
  FunctionItem,
  | "description"
  | "schedule"
  | "schedule_timezone"
  | "schedule_params"
  | "next_run_at"
  | "timeout_seconds"
  | "memory_mb"
  | "shared"
  | "webhooks"
  | "retries"
  | "recording"
  | "proxy"
  | "profiles"
>;
