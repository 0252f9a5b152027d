import { z } from "zod";
import { MEMORY_MB, TIMEOUT_SECONDS } from "../config/plans";
import type { IssueCode } from "../http/validation";
import { DateTime } from "./dateTime";
import { jsonBytes, MAX_SCHEDULE_PARAMS_BYTES, unstorablePart } from "./storableJson";
import { WebhooksInput, WebhookView } from "./webhookSchemas";
import { RetriesInput, RetriesView } from "../retries/retrySettings";
import { RECORDING_MODES } from "../recording/recordingMode";
import { ProxyInput, ProxyView } from "../proxy/proxySettings";
import { ProfilesInput } from "../profiles/profileSettings";

export const NAME_PATTERN = /^[a-z][a-z0-9-]{0,62}$/;
export const FUNCTION_ID_PATTERN = /^fn_[0-9a-z]{26}$/;

const name = z
  .string()
  .regex(NAME_PATTERN, "must match ^[a-z][a-z0-9-]{0,62}$ (lowercase letter first, then lowercase letters, digits, '-')");

/** Settings shared by create and update. */
const settings = {
  description: z.string().max(1000).nullable().optional(),
  schedule: z.string().max(200).nullable().optional(),
  schedule_timezone: z.string().max(100).optional(),
  schedule_params: z
    .record(z.string(), z.unknown())
    .superRefine((value, ctx) => {
      // Kept in the function's record (a DynamoDB item): refuse what it cannot hold exactly.
      const problem = unstorablePart(value, "", 1);
      // Only a value of bounded depth is measured: JSON.stringify of a deeper one can overflow the stack.
      const bytes = problem ? 0 : jsonBytes(value);
      if (problem) ctx.addIssue({ code: "custom", path: problem.path.split("."), message: `cannot be stored: ${problem.reason}` });
      else if (bytes > MAX_SCHEDULE_PARAMS_BYTES) ctx.addIssue({ code: "custom", message: `${bytes} bytes of JSON; the limit is ${MAX_SCHEDULE_PARAMS_BYTES}` });
    })
    .nullable()
    .optional()
    .describe("Parameters of scheduled runs; the automation's defaults fill in the rest"),
  timeout_seconds: z.int().min(TIMEOUT_SECONDS.min).max(TIMEOUT_SECONDS.max).optional().describe("300 when a create does not give it; the plan's max_timeout_seconds may be lower"),
  memory_mb: z.int().min(MEMORY_MB.min).max(MEMORY_MB.max).optional().describe("1024 when a create does not give it; the plan's max_memory_mb may be lower"),
  shared: z.boolean().optional(),
  webhooks: WebhooksInput.optional(),
  retries: RetriesInput.optional(),
  recording: z
    .enum(RECORDING_MODES)
    .optional()
    .describe("Which runs keep a recording of each page (rrweb; inputs masked, secret values redacted), as the artifacts recording-<n>.json: off, failures (runs that do not succeed; the default) or all"),
  proxy: ProxyInput.optional(),
  profiles: ProfilesInput.optional(),
};

export const CreateFunctionBody = z
  .strictObject({ name, code: z.string().describe("The automation module, TypeScript or JavaScript"), ...settings })
  .meta({ id: "CreateFunctionBody" });
export type CreateFunctionBody = z.infer<typeof CreateFunctionBody>;

export const UpdateFunctionBody = z
  .strictObject({ code: z.string().optional(), ...settings })
  .meta({ id: "UpdateFunctionBody", description: "Any create field but `name`; `schedule: null` removes the schedule" });
export type UpdateFunctionBody = z.infer<typeof UpdateFunctionBody>;

export const ForkFunctionBody = z
  .strictObject({ name: name.optional().describe("Name of the copy; default: the source's, suffixed if taken") })
  .meta({ id: "ForkFunctionBody" });
export type ForkFunctionBody = z.infer<typeof ForkFunctionBody>;

/** A bad `name` is `invalid_name`; everything else in a body is `invalid_request`. */
export const nameIssueCode: IssueCode = (issue) =>
  issue.path[0] === "name" && issue.code !== "invalid_type" ? "invalid_name" : undefined;

export const ParameterInfo = z
  .object({
    name: z.string(),
    type: z.string().describe("The declared TypeScript type as written; `unknown` when undeclared"),
    default: z.string().optional().describe("JSON text of the default value; absent for required parameters"),
    required: z.boolean(),
    schema_note: z
      .string()
      .optional()
      .describe("Why this parameter's input_schema is `{}` (any value), in whole or in part: a type JSON Schema cannot express (a generic, imported or global type, a function, `any`/`unknown`, …)"),
  })
  .meta({ id: "ParameterInfo" });

export const CodeWarning = z
  .object({
    code: z.enum(["unawaited_return_in_session", "ignored_launch_option"]),
    message: z.string().describe("Says what is wrong, on which line, and how to write it instead"),
    line: z.int().describe("1-based line of the code"),
  })
  .meta({ id: "CodeWarning" });

export const FunctionRecord = z
  .object({
    function_id: z.string().regex(FUNCTION_ID_PATTERN),
    workflow_id: z.string(),
    // Answers are not parsed: the pattern and bounds below document what create, update and fork let in.
    name: z.string().meta({ pattern: NAME_PATTERN.source }),
    description: z.string().nullable(),
    url: z.string(),
    status: z.enum(["deploying", "active", "failed"]),
    status_reason: z.string().nullable(),
    latest_version: z.string(),
    versions: z.array(z.string()),
    variables: z.array(ParameterInfo).nullable(),
    input_schema: z
      .record(z.string(), z.unknown())
      .describe(
        "JSON Schema (draft 2020-12) of the latest version's call parameters: an object schema, one property per parameter; invocations are checked against it. See also GET /functions/{ref}/openapi.json",
      ),
    schedule: z.string().nullable(),
    schedule_timezone: z.string(),
    schedule_params: z.record(z.string(), z.unknown()).nullable(),
    next_run_at: DateTime.nullable().describe("When the schedule runs it next; null without a schedule"),
    timeout_seconds: z.int().meta({ minimum: TIMEOUT_SECONDS.min, maximum: TIMEOUT_SECONDS.max }),
    memory_mb: z.int().meta({ minimum: MEMORY_MB.min, maximum: MEMORY_MB.max }),
    shared: z.boolean(),
    reference_workflow_id: z.string().nullable(),
    retries: RetriesView.describe(
      "How failed runs of async calls, schedules and batches run again: max_attempts 1 (the default) never retries; the wait before attempt n+1 is backoff_seconds × 2^(n-1), at most 3600 s",
    ),
    recording: z.enum(RECORDING_MODES).describe("Which runs keep a recording of each page as the artifacts recording-<n>.json: off, failures (the default) or all"),
    proxy: ProxyView.describe("The proxy every browser session of its runs goes through (null: none); the password is never shown"),
    profiles: z.array(z.string()).describe("Profiles its runs may open by a computed name, besides those its code names literally in Session.start"),
    webhooks: z.array(WebhookView).describe("Where the ends of its runs are POSTed (none for another account's shared function)"),
    webhook_secret: z
      .string()
      .optional()
      .describe("In the answer of the create or update that set the first webhooks only: the signing secret (`whsec_…`), shown once"),
    created_at: DateTime,
    updated_at: DateTime,
    warnings: z
      .array(CodeWarning)
      .describe("What in the latest version's code deploys but will probably fail when it runs ([] when nothing); kept with each version"),
  })
  .meta({ id: "FunctionRecord" });
export type FunctionRecord = z.infer<typeof FunctionRecord>;

export const FunctionListItem = FunctionRecord.pick({
  function_id: true,
  name: true,
  description: true,
  url: true,
  status: true,
  latest_version: true,
  schedule: true,
  shared: true,
  updated_at: true,
}).meta({ id: "FunctionListItem" });

export const FunctionList = z
  .object({ items: z.array(FunctionListItem), next_cursor: z.string().nullable() })
  .meta({ id: "FunctionList" });

export const VersionInfo = z
  .object({ version: z.string(), created_at: DateTime, code_sha256: z.string(), variables: z.array(ParameterInfo) })
  .meta({ id: "VersionInfo" });

export const VersionList = z.object({ items: z.array(VersionInfo) }).meta({ id: "VersionList" });

export const VersionCode = VersionInfo.extend({ code: z.string().describe("The source as deployed") }).meta({
  id: "VersionCode",
});

export const FunctionOpenapiDocument = z
  .looseObject({
    openapi: z.literal("3.1.0"),
    info: z.object({ title: z.string(), version: z.string(), description: z.string() }),
    servers: z.array(z.object({ url: z.string() })),
    paths: z.record(z.string(), z.unknown()).describe("One path, `/functions/{name}`, with one operation: `post`"),
    components: z.record(z.string(), z.unknown()),
    "x-error-codes": z
      .record(z.string(), z.int().min(400).max(599))
      .describe("Every error code of the API (the Error schema's code) and its HTTP status, as in the service's own document"),
  })
  .meta({
    id: "FunctionOpenapiDocument",
    description:
      "An OpenAPI 3.1 document with one operation: invoking the function with its input_schema as the request body (more members may come, as OpenAPI extensions do)",
  });
