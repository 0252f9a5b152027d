import type { FunctionRecord } from "../../client";
import { type Output, printable } from "./output";

/** The record's code warnings, one line each (the line they name first). */
function warningLines(record: FunctionRecord): string[] {
  return (record.warnings ?? []).map((warning) => `warning (${warning.code}): ${printable(warning.message)}`);
}

/** The code's warnings on stderr, after a deploy (they do not stop it: the code deploys, but probably fails when it runs). */
export function noteWarnings(out: Output, record: FunctionRecord): void {
  for (const line of warningLines(record)) out.note(line);
}

/**
 * Prints a deployed function's record: name, version, status, URL, parameters and the latest
 * version's code warnings (left out with `withWarnings: false`: deploy notes them on stderr).
 */
export function printRecord(out: Output, record: FunctionRecord, withWarnings = true): void {
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
    // A service from before retries answers none.
    ["retries", record.retries && record.retries.max_attempts > 1 ? `${record.retries.max_attempts} attempts, backoff ${record.retries.backoff_seconds} s (doubling)` : null],
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
  const warnings = withWarnings ? warningLines(record) : [];
  if (warnings.length > 0) {
    out.line(`\nwarnings (version ${record.latest_version}):`);
    for (const line of warnings) out.line(`  ${line}`);
  }
}
