/** What Node's permission model throws when a run's code reaches for a file, a process or a thread. */
const ACCESS_DENIED = "ERR_ACCESS_DENIED";
/** Its message, which survives where a library re-throws the refusal as an error of its own (Playwright's `download.saveAs`, `tracing`, `recordHar`). */
const RESTRICTED = "Access to this API has been restricted";

const HINT =
  "A run cannot write files or start processes here: keep a file with `artifacts.save(name, data)` " +
  "(import { artifacts } from \"browserfn/runtime\"; `page.screenshot({ path })` does so by itself). Original error: ";

/** The same, for a library's file-writing API: downloads are kept by themselves, and what else it writes has no place. */
const LIBRARY_HINT =
  "A run cannot write files here, so this API cannot: downloads are kept as artifacts by themselves " +
  "(`download-<name>`), `page.screenshot({ path })` and `page.pdf({ path })` too; keep anything else with " +
  "`artifacts.save(name, data)` (import { artifacts } from \"browserfn/runtime\"). Original error: ";

/** The same, for a file read: a run has only its own code. */
const READ_HINT =
  "A run cannot read files here (it has only its own code): pass data as parameters, keep it in the " +
  "function's secrets, or fetch it. Original error: ";

function field(value: unknown, name: "code" | "permission"): unknown {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>)[name] : undefined;
}

/**
 * The message of a run that failed with `error`, with the fix named first when the error is the
 * permission model's refusal (ERR_ACCESS_DENIED, in the error or its `cause`, or its message
 * re-thrown by a library): most often a file written the way a script on a laptop would
 * (`fs.writeFile`, a library saving a report), which belongs in the run's artifacts. `message`
 * is the message so far (see explainClosedSession); one line, the original message after the hint.
 */
export function explainAccessDenied(error: Error, message: string): string {
  if (typeof message !== "string") return message;
  const cause = (error as { cause?: unknown }).cause;
  const refusal = field(error, "code") === ACCESS_DENIED ? error : field(cause, "code") === ACCESS_DENIED ? cause : undefined;
  if (refusal !== undefined) return `${field(refusal, "permission") === "FileSystemRead" ? READ_HINT : HINT}${message}`;
  // A library's own error around the refusal (its code lost on the way).
  return message.includes(RESTRICTED) ? `${LIBRARY_HINT}${message}` : message;
}
