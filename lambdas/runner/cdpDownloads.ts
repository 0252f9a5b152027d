/**
 * Where a sandbox's browser saves what it downloads is the runtime's choice, never the
 * automation's or a page's: the host passes each CDP command of the worker through
 * `keepDownloadsIn` on its way to the browser, in both sandboxes. A download behaviour that
 * saves files (`allow`, `allowAndName`) saves them in the run's downloads folder (in the
 * profile, emptied after each run, on a file system whose size and use count toward the
 * function's memory), whatever path it asked for; and no command may wrap another, which would
 * pass this filter unread. Without it an automation had the browser save 800 MB into the
 * sandbox's /tmp and /dev/shm, past its memory limit and kept into later runs (issue #26).
 */
import type { GuardVerdict } from "./cdpGuard";

const DOWNLOAD_METHODS = new Set(["Browser.setDownloadBehavior", "Page.setDownloadBehavior"]);
const BEHAVIORS = new Set(["deny", "allow", "allowAndName", "default"]);
const SAVING = new Set(["allow", "allowAndName"]);
/** The non-flat protocol: a command as a string inside another, for a session the filter never sees. */
const WRAPPERS = new Set(["Target.sendMessageToTarget"]);

type Command = { id?: unknown; method?: unknown; sessionId?: unknown; params?: unknown };

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Checks one CDP command (JSON text) of the worker: passes it on, with a download behaviour's
 * path set to `downloadsDir`, or refuses it with the reason the worker gets as its error.
 * A command whose text names neither kind of method and has no `\u` escape (the only way JSON
 * can spell a letter or a dot otherwise) passes untouched and unparsed, as nearly all do, big
 * ones too; any other is parsed and passed on as this side read it, so that the browser reads
 * exactly what was checked (one key twice, say, cannot mean two things).
 */
export function keepDownloadsIn(text: string, downloadsDir: string): GuardVerdict {
  if (!text.includes("\\u") && !text.includes("DownloadBehavior") && !text.includes("sendMessageToTarget")) return { ok: true, message: text };
  let command: Command;
  try {
    const parsed: unknown = JSON.parse(text);
    if (!isRecord(parsed)) throw new Error("not an object");
    command = parsed;
  } catch {
    return { ok: false, id: undefined, sessionId: undefined, reason: "not a CDP command" };
  }
  const { id, sessionId, method } = command;
  const refuse = (reason: string): GuardVerdict => ({ ok: false, id, sessionId, reason: `browserfn refused ${String(method)}: ${reason}` });
  if (typeof method === "string" && WRAPPERS.has(method)) return refuse("commands go to their session directly (flat sessions), not wrapped in another");
  if (typeof method !== "string" || !DOWNLOAD_METHODS.has(method)) return { ok: true, message: JSON.stringify(command) };
  const params = isRecord(command.params) ? command.params : {};
  const behavior = params.behavior;
  if (typeof behavior !== "string" || !BEHAVIORS.has(behavior)) return refuse(`behavior must be one of ${[...BEHAVIORS].join(", ")}`);
  // Field by field: nothing else of what was sent goes on.
  const kept: Record<string, unknown> = { behavior };
  if (SAVING.has(behavior)) kept.downloadPath = downloadsDir;
  if (method === "Browser.setDownloadBehavior") {
    if (typeof params.browserContextId === "string") kept.browserContextId = params.browserContextId;
    if (typeof params.eventsEnabled === "boolean") kept.eventsEnabled = params.eventsEnabled;
  }
  return { ok: true, message: JSON.stringify(sessionId === undefined ? { id, method, params: kept } : { id, sessionId, method, params: kept }) };
}
