import type { Run } from "../../client";
import { type Output, duration, printable, shortTime } from "./output";

/** The stack of a run's error, when the service kept one (`error.stack`). */
function stackOf(error: Run["error"]): string | undefined {
  const stack = (error as { stack?: unknown } | null)?.stack;
  return typeof stack === "string" && stack !== "" ? stack : undefined;
}

/** Prints a run: what ran and when, its parameters, then its result or its error (with the stack), then its console output. */
export function printRun(out: Output, run: Run): void {
  out.fields([
    ["run", run.run_id],
    ["function", `${run.function_name} (${run.function_id})`],
    ["version", run.version],
    ["trigger", run.trigger],
    ["status", run.status === "queued" && run.retry_at ? `queued (attempt ${run.attempt} starts ${shortTime(run.retry_at)})` : run.status],
    ["attempt", run.max_attempts && run.max_attempts > 1 ? `${run.attempt} of ${run.max_attempts}${(run.attempts ?? []).length > 1 ? `: ${(run.attempts ?? []).map((a) => a.status).join(", ")}` : ""}` : null],
    ["queued", shortTime(run.queued_at)],
    ["started", shortTime(run.started_at)],
    ["finished", shortTime(run.finished_at)],
    ["duration", duration(run.duration_ms)],
    ["browser", run.browser_ms ? duration(run.browser_ms) : null],
    ["peak memory", run.peak_memory_mb === null ? null : `${run.peak_memory_mb} MB`],
    ["params", run.params],
  ]);
  if (run.status === "succeeded") {
    out.line("\nresult:");
    out.printJson(run.result);
  }
  if (run.error) {
    out.line(`\nerror: ${run.error.code}: ${printable(run.error.message)}`);
    const stack = stackOf(run.error);
    if (stack !== undefined) out.line(printable(stack).replace(/^/gm, "  "));
  }
  out.line("\nlogs:");
  out.line(run.logs ? printable(run.logs.trimEnd()) : "(none)");
}
