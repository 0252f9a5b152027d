/**
 * What a worker may not ask its browser in the `process` sandbox, where the browser shares the
 * machine's file system: to open local files (`file:` and `filesystem:` URLs, also behind
 * `view-source:`; file inputs and drops, which read local paths). The sandbox's host passes each
 * CDP command through `guardCommand` on its way to the browser, after cdpDownloads (which, in
 * both sandboxes, keeps downloads in the run's own folder). (In the `namespaces` sandbox the
 * browser sees no file of the service at all, and this guard is not used.)
 */

export type GuardVerdict = { ok: true; message: string } | { ok: false; id: unknown; sessionId: unknown; reason: string };

/** Commands that read local files by path. */
const DENIED = new Set(["DOM.setFileInputFiles"]);
const LOCAL_SCHEME = /^(view-source:)*(file|filesystem):/i;

/** True for URLs Chromium would resolve to a local file (whitespace and control characters it strips, any case). */
export function isLocalUrl(url: string): boolean {
  // eslint-disable-next-line no-control-regex
  return LOCAL_SCHEME.test(url.replace(/[\u0000-\u0020\u007f]+/g, ""));
}

/**
 * Checks one CDP command (JSON text) from the worker: passes it on as it is, or refuses it with
 * the reason the worker gets as the command's error.
 */
export function guardCommand(text: string): GuardVerdict {
  let command: { id?: unknown; method?: unknown; sessionId?: unknown; params?: Record<string, unknown> };
  try {
    command = JSON.parse(text) as typeof command;
  } catch {
    return { ok: false, id: undefined, sessionId: undefined, reason: "not a CDP command" };
  }
  const { id, sessionId, method } = command;
  const params = command.params && typeof command.params === "object" ? command.params : {};
  const refuse = (reason: string): GuardVerdict => ({ ok: false, id, sessionId, reason: `browserfn refused ${String(method)}: ${reason}` });
  if (typeof method !== "string") return refuse("no method");
  if (DENIED.has(method)) return refuse("local files are not available to automations");
  if (method === "Input.dispatchDragEvent" && Array.isArray((params.data as { files?: unknown } | undefined)?.files)) {
    return refuse("dropping local files is not available to automations");
  }
  for (const value of Object.values(params)) {
    if (typeof value === "string" && isLocalUrl(value)) return refuse("local files (file: URLs) are not available to automations");
  }
  return { ok: true, message: text };
}
