import type { FunctionRecord } from "../../client";
import type { Output } from "./output";

/** Prints a deployed function's record: name, version, status, URL and parameters. */
export function printRecord(out: Output, record: FunctionRecord): void {
  out.fields([
    ["name", record.name],
    ["function_id", record.function_id],
    ["url", record.url],
    ["status", record.status_reason ? `${record.status} (${record.status_reason})` : record.status],
    ["version", `${record.latest_version} of ${record.versions.length}`],
    ["description", record.description],
    ["schedule", record.schedule ? `${record.schedule} (${record.schedule_timezone}), next ${record.next_run_at ?? "-"}` : null],
    ["timeout", `${record.timeout_seconds} s`],
    ["memory", `${record.memory_mb} MB`],
    ["shared", record.shared],
    ["forked from", record.reference_workflow_id],
    ["created", record.created_at],
    ["updated", record.updated_at],
  ]);
  out.line();
  out.table(
    ["PARAMETER", "TYPE", "REQUIRED", "DEFAULT"],
    (record.variables ?? []).map((v) => [v.name, v.type, v.required ? "yes" : "no", v.default]),
  );
}
