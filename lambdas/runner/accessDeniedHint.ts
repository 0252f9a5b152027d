/** What Node's permission model throws when a run's code reaches for a file, a process or a thread. */
const ACCESS_DENIED = "ERR_ACCESS_DENIED";

const HINT =
  "A run cannot write files or start processes here: keep a file with `artifacts.save(name, data)` " +
  "(import { artifacts } from \"browserfn/runtime\"; `page.screenshot({ path })` does so by itself). Original error: ";

function codeOf(value: unknown): unknown {
  return typeof value === "object" && value !== null ? (value as { code?: unknown }).code : undefined;
}

/**
 * The message of a run that failed with `error`, with the fix named first when the error is the
 * permission model's refusal (ERR_ACCESS_DENIED, in the error or its `cause`): most often a file
 * written the way a script on a laptop would (`fs.writeFile`, a library saving a report), which
 * belongs in the run's artifacts. `message` is the message so far (see explainClosedSession);
 * one line, the original message after the hint.
 */
export function explainAccessDenied(error: Error, message: string): string {
  const denied = codeOf(error) === ACCESS_DENIED || codeOf((error as { cause?: unknown }).cause) === ACCESS_DENIED;
  return denied && typeof message === "string" ? `${HINT}${message}` : message;
}
