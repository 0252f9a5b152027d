import { BrowserfnError, FunctionError } from "../../client";
import { CliError, UsageError } from "./args";
import type { Output } from "./output";

/** Exit codes of the `browserfn` command. */
export const EXIT = { ok: 0, functionFailed: 1, usage: 2, api: 3 } as const;

/**
 * Reports an error on stderr (as the API's error body with --json) and returns the exit code:
 * 1 a function failed, 2 a usage error, 3 an API error (with its code).
 */
export function reportError(error: unknown, out: Output, usage: string): number {
  if (error instanceof UsageError) {
    out.note(`browserfn: ${error.message}\n\nUsage: ${usage}`);
    return EXIT.usage;
  }
  if (error instanceof CliError) {
    out.note(`browserfn: ${error.message}`);
    return error.exitCode;
  }
  if (error instanceof BrowserfnError) {
    if (out.json) {
      const body = { error: { code: error.code, message: error.message, request_id: error.requestId, details: error.details } };
      out.note(JSON.stringify(body));
    } else {
      const runId = error instanceof FunctionError && error.runId ? ` (run ${error.runId})` : "";
      out.note(`browserfn: ${error.message} [${error.code}${error.status ? `, HTTP ${error.status}` : ""}]${runId}`);
    }
    return error instanceof FunctionError ? EXIT.functionFailed : EXIT.api;
  }
  out.note(`browserfn: unexpected error: ${(error as Error)?.stack ?? String(error)}`);
  return EXIT.functionFailed;
}
