import { copyWarnings } from "./copyWarnings";
import type { FunctionRecord } from "../schemas/functionSchemas";
import { inputSchemaOf } from "./inputSchemaOf";
import type { FunctionItem } from "./types";
import { retriesOf } from "../retries/retrySettings";
import { recordingModeOf } from "../recording/recordingMode";
import { proxyOf } from "../proxy/proxySettings";
import { profilesOf } from "../profiles/profileSettings";

/**
 * The Function record of API.md for a stored function, with the latest version's code warnings
 * (compileCode's, stored with it; [] when none, and for records stored before they were kept).
 */
export function toRecord(fn: FunctionItem, baseUrl: string): FunctionRecord {
  const record: FunctionRecord = {
    function_id: fn.function_id,
    workflow_id: fn.function_id,
    name: fn.name,
    description: fn.description,
    url: functionUrl(baseUrl, fn.name),
    status: fn.status,
    status_reason: fn.status_reason,
    latest_version: String(fn.latest_version),
    versions: Array.from({ length: fn.latest_version }, (_, i) => String(i + 1)),
    variables: fn.variables,
    input_schema: inputSchemaOf(fn),
    schedule: fn.schedule,
    schedule_timezone: fn.schedule_timezone,
    schedule_params: fn.schedule_params ?? null,
    next_run_at: fn.next_run_at,
    timeout_seconds: fn.timeout_seconds,
    memory_mb: fn.memory_mb,
    shared: fn.shared,
    reference_workflow_id: fn.reference_workflow_id,
    retries: retriesOf(fn),
    recording: recordingModeOf(fn.recording),
    proxy: proxyOf(fn),
    profiles: profilesOf(fn),
    webhooks: fn.webhooks.map((webhook) => ({ url: webhook.url, events: [...webhook.events] })),
    created_at: fn.created_at,
    updated_at: fn.updated_at,
    warnings: copyWarnings(fn.warnings ?? []),
  };
  return record;
}

export function functionUrl(baseUrl: string, name: string): string {
  return `${baseUrl}/functions/${name}`;
}
