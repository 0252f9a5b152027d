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

/** One page the restore works in, as its driver gives it. */
export interface RestorePage {
  /**
   * Opens a CDP session of the page's own, or a hold on one it shares (detached by the restore when
   * the session saves); it may open before the driver has finished making the page.
   */
  openCdp(): Promise<PageCdp>;
  /**
   * Adds `source` as a script of every new document of the page, through the driver, before the
   * page is handed out: it runs before any script the code adds; the answer removes it.
   */
  addScript(source: string): Promise<() => Promise<void>>;
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
 * How "once" holds whatever the site does: each armed page's main-document responses from the
 * origins still waiting when it was armed are paused (Fetch, response stage; other origins'
 * documents go by unpaused) while one waits, and only the first of a saved origin (a 2xx HTML
 * document) gets a `Server-Timing` mark with this session's random token. The script every
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
   * `contextLeft`: the pages' context is left for the runner's host to dispose, so they are not
   * cleaned of the restore (its script, binding, paused documents and sessions go with them).
   */
  finish(readNow?: (origin: string) => string, contextLeft?: boolean): Promise<{ restored: Set<string>; read: Map<string, string> }>;
}

/** What Runtime.executionContextCreated says of a context. */
interface ContextCreated {
  context: { id: number; origin: string; uniqueId: string; auxData?: { isDefault?: boolean; frameId?: string } };
}

/** A main-world context of one of an armed page's frames, as the browser reported it. */
interface KnownContext {
  uniqueId: string;
  origin: string;
  frame: string;
}

const HTML = /^\s*(text\/html|application\/xhtml\+xml)\s*(;|$)/i;

/** What a restoring document tells instead of its origin when its writes failed: `FAILED` + origin. */
const FAILED = "failed:";

/**
 * How long a save waits for a restoring document still writing (its IndexedDB, when the session
 * closes right after its first page loaded): its writes done, what the session changed there is
 * saved; past this, the origin keeps its saved state.
 */
export const SETTLE_MS = 5000;

/** True when the paused response will become a document of its origin (a download, a 204 or a redirect will not). */
function documentResponse(event: PausedResponse): boolean {
  const status = event.responseStatusCode ?? 0;
  if (status < 200 || status >= 300 || status === 204 || status === 205) return false;
  const header = (name: string) => event.responseHeaders?.find((h) => h.name.toLowerCase() === name)?.value ?? "";
  return HTML.test(header("content-type")) && !/^\s*attachment/i.test(header("content-disposition"));
}

/** `text` matched literally in a Fetch URL pattern (where `*` and `?` are wildcards, `\\` escapes). */
function escapePattern(text: string): string {
  return text.replace(/[\\*?]/g, (character) => `\\${character}`);
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
  const tell = (word) => typeof confirm === "function" && confirm(word);
  Promise.resolve((${writeOrigin.toString()})(state)).then(() => tell(origin), () => tell(${JSON.stringify(FAILED)} + origin));
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
  /** Each armed page: its session, its restore script's removal, and its frames' main-world contexts (by context id) as the browser reports them. */
  const armed: Array<{ cdp: PageCdp; removeScript?: Promise<() => Promise<void>>; watching: boolean; main: { frame: string }; contexts: Map<number, KnownContext>; gone?: boolean }> = [];
  let script: string | undefined;
  /** Origins whose restoring document said its writes failed (the origin keeps its saved state). */
  const failed = new Set<string>();
  /**
   * The origins whose restoring document was offered (its response marked), each with its armed
   * page and, once the browser made it, that document's context there (the page's first of that
   * origin after the offer).
   */
  const restoring = new Map<string, { entry: (typeof armed)[number]; context?: number }>();
  /** Woken when a confirmation comes in or a document goes (a save waiting for a restore still writing). */
  let wake: (() => void) | undefined;
  const changed = () => {
    const woken = wake;
    wake = undefined;
    woken?.();
  };
  /** True while an offered origin not confirmed yet still has its restoring document there (its restore still writing). */
  const stillWriting = () =>
    [...restoring].some(
      ([origin, document]) => !restored.has(origin) && !failed.has(origin) && document.context !== undefined && !document.entry.gone && document.entry.contexts.has(document.context),
    );
  /** Waits (at most SETTLE_MS) until no armed page shows a restoring document still writing. */
  const settle = async () => {
    const deadline = Date.now() + SETTLE_MS;
    while (stillWriting() && Date.now() < deadline) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
      });
      clearTimeout(timer);
    }
  };
  const disarm = (entry: (typeof armed)[number]) => {
    if (!entry.watching) return;
    entry.watching = false;
    void entry.cdp.send("Fetch.disable").catch(() => undefined);
  };
  /**
   * The script and the binding leave the pages once every offered origin's document has confirmed
   * (or at the save): removed as the last origin is offered, they could be gone before that
   * origin's document is made.
   */
  const removeScripts = () => {
    for (const entry of armed) {
      const removing = entry.removeScript;
      entry.removeScript = undefined;
      void removing?.then((remove) => remove()).catch(() => undefined);
    }
  };
  /** The binding leaves the pages: their later documents do not find it (a session the restore shares stays attached). */
  const removeBinding = () => {
    for (const entry of armed) void entry.cdp.send("Runtime.removeBinding", { name: binding }).catch(() => undefined);
  };
  return {
    async arm(page) {
      if (waiting.size === 0) return;
      script ??= restoreScript(mark, binding, origins);
      // The script goes in through the driver (so it runs before any script the code adds), beside the session's own setting up.
      const removeScript = page.addScript(script);
      removeScript.catch(() => undefined);
      const cdp = await page.openCdp();
      // The page's main frame, known once the frame tree is in (before the page is handed out).
      const main = { frame: "" };
      const entry: (typeof armed)[number] = { cdp, removeScript, watching: true, main, contexts: new Map() };
      armed.push(entry);
      cdp.on("Runtime.executionContextCreated", (({ context }: ContextCreated) => {
        const frame = context.auxData?.frameId;
        if (context.auxData?.isDefault && frame) entry.contexts.set(context.id, { uniqueId: context.uniqueId, origin: context.origin, frame });
        const document = restoring.get(context.origin);
        if (context.auxData?.isDefault && frame === main.frame && document?.entry === entry && document.context === undefined) document.context = context.id;
      }) as (params: never) => void);
      cdp.on("Runtime.executionContextDestroyed", ((event: { executionContextId: number }) => {
        entry.contexts.delete(event.executionContextId);
        changed();
      }) as (params: never) => void);
      cdp.on("Runtime.executionContextsCleared", (() => {
        entry.contexts.clear();
        changed();
      }) as (params: never) => void);
      cdp.on("Runtime.bindingCalled", ((event: { name: string; payload: string; executionContextId: number }) => {
        const failedOrigin = event.payload.startsWith(FAILED) ? event.payload.slice(FAILED.length) : undefined;
        const origin = failedOrigin ?? event.payload;
        // Only a main document of the origin itself confirms it (a site that found the binding cannot confirm another origin).
        const caller = entry.contexts.get(event.executionContextId);
        if (event.name !== binding || !saved.has(origin) || caller?.origin !== origin || caller.frame !== main.frame) return;
        if (failedOrigin !== undefined) failed.add(origin);
        else restored.add(origin);
        changed();
        if (waiting.size === 0 && [...restoring.keys()].every((offeredOrigin) => restored.has(offeredOrigin) || failed.has(offeredOrigin))) {
          removeScripts();
          removeBinding();
        }
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
        restoring.set(origin, { entry });
        const headers = [...(event.responseHeaders ?? []), { name: "Server-Timing", value: mark }];
        void cdp.send("Fetch.continueResponse", { requestId: event.requestId, responseCode: event.responseStatusCode, responseHeaders: headers }).catch(() => undefined);
        if (waiting.size === 0) for (const other of armed) disarm(other);
      }) as (params: never) => void);
      // Bindings report their calls only to a session with the Runtime domain on.
      const [tree] = await Promise.all([
        cdp.send("Page.getFrameTree") as Promise<{ frameTree: { frame: { id: string } } }>,
        cdp.send("Runtime.enable"),
        cdp.send("Runtime.addBinding", { name: binding }),
        cdp.send("Fetch.enable", { patterns: [...waiting].map((origin) => ({ urlPattern: `${escapePattern(origin)}/*`, resourceType: "Document", requestStage: "Response" })) }),
        removeScript,
      ]);
      main.frame = tree.frameTree.frame.id;
      // Every origin found its document while this page was armed.
      if (waiting.size === 0) disarm(entry);
    },
    async finish(readNow, contextLeft) {
      // The pages are disarmed (a context left to the host goes whole, and nothing is sent that could still be under way as it goes).
      if (!contextLeft) {
        for (const entry of armed) disarm(entry);
        removeScripts();
      }
      const read = new Map<string, string>();
      // A saved origin is read early only if its confirmation was in before any read went: its
      // restore's writes were done then, whichever page reads it (another page of the origin
      // may show it while the restoring one still writes).
      const confirmedBefore = new Set(restored);
      // A round trip on each page's session, sent before its read: its bindings called before are in.
      // (A page closed meanwhile answers no more: its document is not waited for.)
      const trips = armed.map((entry) =>
        entry.cdp.send("Runtime.runIfWaitingForDebugger").catch(() => {
          entry.gone = true;
        }),
      );
      /** Reads each armed page's document where it is, if its origin may be read now (`ready`). */
      const readPages = (ready: (origin: string) => boolean) =>
        armed.map(async (entry) => {
          const shown = [...entry.contexts.values()].reverse().find((known) => known.frame === entry.main.frame);
          const origin = shown && webOrigin(shown.origin) === shown.origin ? shown.origin : undefined;
          if (!readNow || !shown || !origin || read.has(origin) || !ready(origin)) return;
          // Evaluated in that one context: if its document has gone meanwhile, nothing is read here.
          const answer = (await entry.cdp
            .send("Runtime.evaluate", { expression: readNow(origin), uniqueContextId: shown.uniqueId, awaitPromise: true, returnByValue: true })
            .catch(() => undefined)) as { result?: { value?: unknown }; exceptionDetails?: unknown } | undefined;
          const value = answer && !answer.exceptionDetails ? answer.result?.value : undefined;
          if (typeof value === "string" && !read.has(origin)) read.set(origin, value);
        });
      const reads = readPages((origin) => !saved.has(origin) || confirmedBefore.has(origin));
      await Promise.all(trips);
      // A restoring document still writing when the session closed (a save right after the
      // page loaded): waited for, so that what the session changed there is saved, then read
      // where it is (its confirmation means its writes are done, whichever page reads it).
      if (stillWriting()) {
        await settle();
        reads.push(...readPages((origin) => restored.has(origin) && !confirmedBefore.has(origin)));
      }
      const confirmed = new Set(restored);
      await Promise.all(reads);
      // Once no confirmation is waited for: the binding taken off, and the sessions detached in the
      // background (a session it shares stays, its listeners taken off); nothing waits for it.
      if (!contextLeft) {
        removeBinding();
        for (const entry of armed) void entry.cdp.detach().catch(() => undefined);
      }
      armed.length = 0;
      return { restored: confirmed, read };
    },
  };
}
