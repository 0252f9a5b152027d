import { randomBytes } from "node:crypto";
import type { OriginState } from "./browserState";
import { writeOrigin } from "./originStorage";
import { webOrigin } from "./stateContext";

/** A CDP session of one page (puppeteer's or Playwright's CDPSession): all the restore needs of it. */
export interface PageCdp {
  send(method: string, params?: object): Promise<unknown>;
  on(event: string, handler: (params: never) => void): unknown;
  detach(): Promise<void>;
}

/**
 * One page the restore works in, as its driver gives it: a CDP session of the page's own
 * (detached by the restore when the session saves), which may be opened before the driver has
 * finished making its page.
 */
export interface RestorePage {
  openCdp(): Promise<PageCdp>;
}

/** What Fetch.requestPaused says of a main-document response. */
interface PausedResponse {
  requestId: string;
  frameId: string;
  request: { url: string };
  responseStatusCode?: number;
  responseHeaders?: Array<{ name: string; value: string }>;
}

/**
 * A profile's storage put back lazily: in the first document of each saved origin that one of
 * the session's pages shows (top level), before that document's own scripts run, and never in
 * another. No navigation of its own: a document of the origin is needed to write its
 * localStorage and IndexedDB, and the user's own navigation brings one.
 *
 * How "once" holds whatever the site does: each armed page's main-document responses are paused
 * (Fetch, response stage) while an origin waits, and only the first of a saved origin (a 2xx
 * HTML document) gets a `Server-Timing` mark with this session's random token. The script every
 * new document of the page runs writes the origin's saved state only where its own navigation
 * entry carries that mark, so a later document of the origin (a logout that clears storage and
 * reloads) never brings it back. The script then tells the session (a binding) that the origin
 * is restored: only those origins' storage is read back at the save; the others keep their
 * saved state.
 */
export interface LazyRestore {
  /** Arms a page: its documents are watched until every saved origin has had its first document. */
  arm(page: RestorePage): Promise<void>;
  /**
   * The origins restored so far (each confirmed by its document), once every armed page's
   * earlier messages are in; the pages are disarmed. With `readNow`: each armed page's document
   * is also read where it is, right behind that round trip on the same session (so after any
   * confirmation it brings in), in the page's main execution context, whose origin the browser
   * reported: `read` holds the JSON text `readNow(origin)` evaluated to there, by origin.
   */
  finish(readNow?: (origin: string) => string): Promise<{ restored: Set<string>; read: Map<string, string> }>;
}

/** What Runtime.executionContextCreated says of a context. */
interface ContextCreated {
  context: { id: number; origin: string; uniqueId: string; auxData?: { isDefault?: boolean; frameId?: string } };
}

const HTML = /^\s*(text\/html|application\/xhtml\+xml)\s*(;|$)/i;

/** True when the paused response will become a document of its origin (a download, a 204 or a redirect will not). */
function documentResponse(event: PausedResponse): boolean {
  const status = event.responseStatusCode ?? 0;
  if (status < 200 || status >= 300 || status === 204 || status === 205) return false;
  const header = (name: string) => event.responseHeaders?.find((h) => h.name.toLowerCase() === name)?.value ?? "";
  return HTML.test(header("content-type")) && !/^\s*attachment/i.test(header("content-disposition"));
}

/** The script of every new document of an armed page: see LazyRestore. */
function restoreScript(mark: string, binding: string, origins: readonly OriginState[]): string {
  const saved: Record<string, Pick<OriginState, "localStorage" | "indexedDB">> = {};
  for (const origin of origins) saved[origin.origin] = { localStorage: origin.localStorage, indexedDB: origin.indexedDB };
  // The state as a string literal, parsed only in the one document that restores.
  const text = JSON.stringify(JSON.stringify(saved));
  return `(() => {
  const confirm = globalThis[${JSON.stringify(binding)}];
  try { delete globalThis[${JSON.stringify(binding)}]; } catch {}
  if (window.top !== window) return;
  const entry = performance.getEntriesByType("navigation")[0];
  if (!entry || !Array.prototype.some.call(entry.serverTiming || [], (timing) => timing.name === ${JSON.stringify(mark)})) return;
  const origin = location.origin;
  const all = JSON.parse(${text});
  const state = Object.prototype.hasOwnProperty.call(all, origin) ? all[origin] : undefined;
  if (!state) return;
  Promise.resolve((${writeOrigin.toString()})(state)).then(() => typeof confirm === "function" && confirm(origin), () => undefined);
})();`;
}

/** A lazy restore of `origins` (those holding data) for one session's context. */
export function lazyRestore(origins: readonly OriginState[]): LazyRestore {
  const token = randomBytes(12).toString("hex");
  const mark = `browserfn-restore-${token}`;
  const binding = `__browserfnRestored_${token}`;
  const saved = new Set(origins.map((origin) => origin.origin));
  const waiting = new Set(saved);
  const restored = new Set<string>();
  /** Each armed page: its session, its restore script, and its frames' main-world contexts (by frame id) as the browser reports them. */
  const armed: Array<{ cdp: PageCdp; script?: Promise<unknown>; watching: boolean; main: { frame: string }; contexts: Map<string, { id: number; uniqueId: string; origin: string }> }> = [];
  let script: string | undefined;
  const disarm = (entry: (typeof armed)[number]) => {
    if (!entry.watching) return;
    entry.watching = false;
    void entry.cdp.send("Fetch.disable").catch(() => undefined);
    void entry.script
      ?.then((added) => entry.cdp.send("Page.removeScriptToEvaluateOnNewDocument", { identifier: (added as { identifier: string }).identifier }))
      .catch(() => undefined);
  };
  return {
    async arm(page) {
      if (waiting.size === 0) return;
      script ??= restoreScript(mark, binding, origins);
      const cdp = await page.openCdp();
      // The page's main frame, known once the frame tree is in (before the page is handed out).
      const main = { frame: "" };
      const entry: (typeof armed)[number] = { cdp, watching: true, main, contexts: new Map() };
      armed.push(entry);
      cdp.on("Runtime.executionContextCreated", (({ context }: ContextCreated) => {
        const frame = context.auxData?.frameId;
        if (context.auxData?.isDefault && frame) entry.contexts.set(frame, { id: context.id, uniqueId: context.uniqueId, origin: context.origin });
      }) as (params: never) => void);
      cdp.on("Runtime.executionContextDestroyed", ((event: { executionContextId: number }) => {
        for (const [frame, known] of entry.contexts) if (known.id === event.executionContextId) entry.contexts.delete(frame);
      }) as (params: never) => void);
      cdp.on("Runtime.executionContextsCleared", (() => entry.contexts.clear()) as (params: never) => void);
      cdp.on("Runtime.bindingCalled", ((event: { name: string; payload: string }) => {
        if (event.name === binding && saved.has(event.payload)) restored.add(event.payload);
      }) as (params: never) => void);
      cdp.on("Fetch.requestPaused", ((event: PausedResponse) => {
        const origin = webOrigin(event.request.url);
        const offer = event.frameId === main.frame && origin !== undefined && waiting.has(origin) && documentResponse(event);
        if (!offer) {
          void cdp.send("Fetch.continueRequest", { requestId: event.requestId }).catch(() => undefined);
          return;
        }
        // This response is the origin's one restoring document, whichever page shows it.
        waiting.delete(origin);
        const headers = [...(event.responseHeaders ?? []), { name: "Server-Timing", value: mark }];
        void cdp.send("Fetch.continueResponse", { requestId: event.requestId, responseCode: event.responseStatusCode, responseHeaders: headers }).catch(() => undefined);
        if (waiting.size === 0) for (const other of armed) disarm(other);
      }) as (params: never) => void);
      // In one go, on the page's own session of the restore (the session runs them in order):
      // bindings report their calls only to a session with the Runtime domain on, and its
      // scripts for new documents run only with its Page domain on.
      const setUp = [cdp.send("Page.enable"), cdp.send("Runtime.enable"), cdp.send("Runtime.addBinding", { name: binding })];
      entry.script = cdp.send("Page.addScriptToEvaluateOnNewDocument", { source: script });
      const [tree] = await Promise.all([
        cdp.send("Page.getFrameTree") as Promise<{ frameTree: { frame: { id: string } } }>,
        cdp.send("Fetch.enable", { patterns: [{ resourceType: "Document", requestStage: "Response" }] }),
        entry.script,
        ...setUp,
      ]);
      main.frame = tree.frameTree.frame.id;
      // Every origin found its document while this page was armed.
      if (waiting.size === 0) disarm(entry);
    },
    async finish(readNow) {
      for (const entry of armed) disarm(entry);
      const read = new Map<string, string>();
      // A round trip on each page's session, sent before its read: its bindings called before are in.
      const trips = armed.map((entry) => entry.cdp.send("Runtime.runIfWaitingForDebugger").catch(() => undefined));
      const reads = armed.map(async (entry) => {
        const shown = entry.contexts.get(entry.main.frame);
        const origin = shown && webOrigin(shown.origin) === shown.origin ? shown.origin : undefined;
        if (!readNow || !shown || !origin) return;
        // Evaluated in that one context: if its document has gone meanwhile, nothing is read here.
        const answer = (await entry.cdp
          .send("Runtime.evaluate", { expression: readNow(origin), uniqueContextId: shown.uniqueId, awaitPromise: true, returnByValue: true })
          .catch(() => undefined)) as { result?: { value?: unknown }; exceptionDetails?: unknown } | undefined;
        const value = answer && !answer.exceptionDetails ? answer.result?.value : undefined;
        if (typeof value === "string" && !read.has(origin)) read.set(origin, value);
      });
      await Promise.all(trips);
      const confirmed = new Set(restored);
      await Promise.all(reads);
      // Detached in the background: nothing waits for it.
      for (const entry of armed) void entry.cdp.detach().catch(() => undefined);
      armed.length = 0;
      return { restored: confirmed, read };
    },
  };
}
