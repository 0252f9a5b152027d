/**
 * The judge of a kept browser (see keptBrowser): it reads every CDP command a worker sends its
 * browser, and every message the browser sends back that names a session or a context, and
 * says whether the browser is still fit for another run. A browser is kept only if nothing a
 * run did can outlive the run's own browser contexts, which the reset disposes: so a command
 * that acts at the browser's level is allowed only if the runtime's own drivers send it
 * (puppeteer's and Playwright's connections, `Session.start`, scripts' launch()/close(),
 * profiles, proxies, downloads, recordings, live view) and then only on a context the run
 * created; anything else (a page or a cookie of the default context, a permission without a
 * context, `Target.exposeDevToolsProtocol`, `Browser.close`, an unknown method) taints the
 * browser, and a tainted browser is killed at the run's end as every browser was before.
 *
 * Commands are judged as the browser reads them: each is parsed here and passed on as it was
 * read (see relayText), so a key given twice cannot mean one thing here and another there.
 */

/** Browser-level methods the runtime's drivers send, and what each may act on. */
const ALLOWED: Record<string, "any" | "context" | "own-context"> = {
  // Reads, and the connection's own bookkeeping.
  "Browser.getVersion": "any",
  "Browser.getWindowForTarget": "any",
  "Target.getBrowserContexts": "any",
  "Target.getTargets": "any",
  "Target.getTargetInfo": "any",
  "Target.setDiscoverTargets": "any",
  "Target.setAutoAttach": "any",
  "Target.attachToTarget": "any",
  "Target.attachToBrowserTarget": "any",
  "Target.detachFromTarget": "any",
  "Target.activateTarget": "any",
  "Target.closeTarget": "any",
  "Runtime.runIfWaitingForDebugger": "any",
  // Contexts: made by the run, and only its own disposed.
  "Target.createBrowserContext": "any",
  "Target.disposeBrowserContext": "own-context",
  // The reset sets download behaviour back (and empties the folder, which keepDownloadsIn imposes).
  "Browser.setDownloadBehavior": "any",
  "Browser.cancelDownload": "context",
  // Pages, permissions and cookies: only in a context the run made (the reset disposes it).
  "Target.createTarget": "context",
  "Browser.grantPermissions": "context",
  "Browser.setPermission": "context",
  "Browser.resetPermissions": "context",
  "Storage.getCookies": "context",
  "Storage.setCookies": "context",
  "Storage.clearCookies": "context",
};

/**
 * Domains (and methods) that may act beyond a page even when sent on a page's session: judged
 * there too (certificate errors ignored, extensions or web apps installed, cookies of another
 * context, the process's memory or tracing, …); a page's other domains act on its page and
 * context only, which the reset closes.
 */
const BROWSER_DOMAINS = [
  "Browser.",
  "Target.",
  // The whole domain: besides cookies, it sets tracking and testing modes, quotas and bounce-tracking runs of the profile, not the page's.
  "Storage.",
  "SystemInfo.",
  "Tethering.",
  "Tracing.",
  "Memory.",
  "Cast.",
  "Security.",
  "Extensions.",
  "PWA.",
  // Virtual authenticators and devices, federated sign-in and autofill: not known to stay within a page; no driver of ours sends them.
  "WebAuthn.",
  "BluetoothEmulation.",
  "DeviceAccess.",
  "FedCm.",
  "Autofill.",
];

type Command = { id?: unknown; method?: unknown; sessionId?: unknown; params?: unknown };

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** A top-level `sessionId`, which Chromium writes last, and an answer's `id`, which it writes first (see cdpMux). */
const SESSION_AT_END = /,"sessionId":"([^"\\]+)"\}$/;
const ID_AT_START = /^\{"id":(\d+),/;

export function sessionOf(text: string): string | undefined {
  return SESSION_AT_END.exec(text.length > 64 ? text.slice(-64) : text)?.[1];
}

export function answerIdOf(text: string): number | undefined {
  const found = ID_AT_START.exec(text.slice(0, 32))?.[1];
  return found === undefined ? undefined : Number(found);
}

export class BrowserJudge {
  /** Why the browser may not serve another run (the first reason seen); undefined while it may. */
  tainted: string | undefined;
  /** Sessions of the run's pages, workers and frames (closed with their contexts at the reset). */
  readonly pageSessions = new Set<string>();
  /** Every session the worker attached (pages and browser-target ones): the reset detaches them. */
  readonly sessions = new Set<string>();
  /** Contexts the run created (learned from the browser's answers): the only ones it may act on. */
  readonly contexts = new Set<string>();
  /** Commands whose answers this judge reads: the key is `session id` + id. */
  readonly #watched = new Map<string, "context" | "attach">();

  taint(reason: string): void {
    this.tainted ??= reason;
  }

  /**
   * Judges one command of the worker (JSON text); returns the text to pass on (as read here),
   * or undefined for text that is no command (the relay refuses it).
   */
  command(text: string): { message: string; command: Command } | undefined {
    let command: Command;
    try {
      const parsed: unknown = JSON.parse(text);
      if (!isRecord(parsed)) return undefined;
      command = parsed;
    } catch {
      return undefined;
    }
    const { method, sessionId, id } = command;
    if (typeof method !== "string") {
      this.taint("a command without a method");
      return { message: JSON.stringify(command), command };
    }
    const onPage = typeof sessionId === "string" && this.pageSessions.has(sessionId);
    if (!onPage || BROWSER_DOMAINS.some((domain) => method.startsWith(domain))) this.#judge(method, isRecord(command.params) ? command.params : {});
    if (typeof id === "number") {
      const key = `${typeof sessionId === "string" ? sessionId : ""}:${id}`;
      if (method === "Target.createBrowserContext") this.#watched.set(key, "context");
      else if (method === "Target.attachToTarget" || method === "Target.attachToBrowserTarget") this.#watched.set(key, "attach");
    }
    return { message: JSON.stringify(command), command };
  }

  #judge(method: string, params: Record<string, unknown>): void {
    const rule = ALLOWED[method];
    if (!rule) return this.taint(`${method} acts on the browser`);
    if (rule === "any") return;
    const context = params.browserContextId;
    if (typeof context !== "string" || !this.contexts.has(context)) this.taint(`${method} outside the run's own contexts`);
  }

  /**
   * Reads one message of the browser (JSON text) for what the judge tracks: the contexts the
   * run made, the sessions it attached (and of which targets). Only answers to watched commands
   * and Target events are parsed.
   */
  message(text: string): void {
    if (this.#watched.size > 0) {
      const id = answerIdOf(text);
      if (id !== undefined) {
        const key = `${sessionOf(text) ?? ""}:${id}`;
        const kind = this.#watched.get(key);
        if (kind) {
          this.#watched.delete(key);
          const result = (JSON.parse(text) as { result?: Record<string, unknown> }).result;
          if (kind === "context" && typeof result?.browserContextId === "string") this.contexts.add(result.browserContextId);
          if (kind === "attach" && typeof result?.sessionId === "string") this.sessions.add(result.sessionId);
          return;
        }
      }
    }
    if (!text.startsWith('{"method":"Target.attachedToTarget"')) return;
    const params = (JSON.parse(text) as { params?: { sessionId?: unknown; targetInfo?: { type?: unknown; browserContextId?: unknown } } }).params;
    const session = params?.sessionId;
    if (typeof session !== "string") return;
    this.sessions.add(session);
    const type = params?.targetInfo?.type;
    if (type === "browser") return;
    const context = params?.targetInfo?.browserContextId;
    // A page, worker or frame of a context the run did not make: the default context's (or another's).
    if (typeof context !== "string" || !this.contexts.has(context)) this.taint(`a ${String(type)} outside the run's own contexts was attached`);
    this.pageSessions.add(session);
  }

  /** After the reset: the next run starts with no session, context or pending answer of this one. */
  clearRun(): void {
    this.pageSessions.clear();
    this.sessions.clear();
    this.contexts.clear();
    this.#watched.clear();
  }
}
