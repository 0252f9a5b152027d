/**
 * Holds the pages a run's pages open (popups: `window.open`, `target=_blank`, forms) before
 * they load anything, on the drivers' own connections, for the runner's hooks (recordings).
 *
 * Both drivers auto-attach to every new page with `waitForDebuggerOnStart`, so Chromium holds a
 * new page until each driver sends `Runtime.runIfWaitingForDebugger` on its session (Playwright
 * on the page's session; puppeteer on the session of the page's tab, which holds the page in it
 * and names the page, with its opener, only once puppeteer auto-attaches in it). The
 * multiplexer (CdpMux) shows this gate every `Target.attachedToTarget` a driver hears: for a page
 * with an opener, a hook may answer a promise (say, once its recorder's commands are sent), and
 * until it settles (at most HOLD_MAX_MS) whatever the driver sends on that page's session waits
 * here, in order. A run that opens no popup pays nothing: no connection, no command, no hold.
 */
import type { ObjectTransport } from "./cdpMux";

/** A page opened by another page (its `openerId`), held by a driver before it loads anything. */
export interface OpenedPage {
  targetId: string;
  openerId: string;
}

/** Answers a promise to hold `page` until it settles, or undefined to let it go at once. */
export type OpenedPageHook = (page: OpenedPage) => Promise<void> | undefined;

/** The longest a driver's page is held for a hook (a hook that never settles does not stall the driver). */
export const HOLD_MAX_MS = 5_000;

type Attached = {
  sessionId?: unknown;
  params?: { sessionId?: unknown; waitingForDebugger?: unknown; targetInfo?: { type?: unknown; targetId?: unknown; openerId?: unknown } };
};

const RUN = '"Runtime.runIfWaitingForDebugger"';

export class OpenedPageGate {
  readonly #send: (text: string) => void;
  readonly #hooks = new Set<OpenedPageHook>();
  /**
   * Held sessions of the drivers (a page's, or a tab's: puppeteer attaches a new page's tab,
   * which holds the page, and then the page in it): once the client asks to let its target go
   * (`Runtime.runIfWaitingForDebugger`), that and whatever it sends after on that session wait
   * here, in order.
   */
  readonly #holds = new Map<string, { queue: string[] | undefined }>();
  /** Held tabs whose page is not known yet: let go once it is, unless it was opened by a page. */
  readonly #tabs = new Map<string, NodeJS.Timeout>();
  /** Each opened page's hold, by target id (a page both drivers attach is held once, for both). */
  readonly #targets = new Map<string, Promise<void> | undefined>();

  /** `send` puts a message on the pipe. */
  constructor(send: (text: string) => void) {
    this.#send = send;
  }

  /** True while a hook is set: only then are the drivers' messages looked at. */
  get active(): boolean {
    return this.#hooks.size > 0;
  }

  /** Sets `hook` for the pages opened from now on; the function returned removes it. */
  add(hook: OpenedPageHook): () => void {
    this.#hooks.add(hook);
    return () => {
      this.#hooks.delete(hook);
      if (this.#hooks.size === 0) this.#targets.clear();
    };
  }

  /** Told of each `Target.attachedToTarget` a driver hears (`message.sessionId`: the session it came on), before the driver hears it. */
  attached(message: Attached): void {
    const params = message.params;
    const info = params?.targetInfo;
    const sessionId = params?.sessionId;
    if (typeof sessionId !== "string" || !info) return;
    if (info.type === "tab") {
      if (params?.waitingForDebugger !== true) return;
      this.#holds.set(sessionId, { queue: undefined });
      this.#tabs.set(sessionId, setTimeout(() => this.#decided(sessionId, undefined), HOLD_MAX_MS));
      return;
    }
    if (info.type !== "page" || typeof info.targetId !== "string") return;
    const opener = typeof info.openerId === "string" ? info.openerId : undefined;
    const tab = typeof message.sessionId === "string" && this.#tabs.has(message.sessionId) ? message.sessionId : undefined;
    // The page in a held tab: the tab is held for it (or let go).
    if (tab !== undefined) return this.#decided(tab, opener === undefined ? undefined : this.#hold(info.targetId, opener));
    if (params?.waitingForDebugger !== true || opener === undefined) return;
    const hold = this.#hold(info.targetId, opener);
    if (!hold) return;
    this.#holds.set(sessionId, { queue: undefined });
    void hold.then(() => this.#release(sessionId));
  }

  /** Told of any other message a driver hears on `sessionId`: a held tab that answers before its page is known holds none. */
  heard(sessionId: string): void {
    if (this.#tabs.has(sessionId)) this.#decided(sessionId, undefined);
  }

  /** Sends `text` (a driver's message on `sessionId`) now, or once its session is let go. */
  send(text: string, sessionId: string | undefined): void {
    const hold = sessionId === undefined ? undefined : this.#holds.get(sessionId);
    if (hold && !hold.queue && text.includes(RUN)) hold.queue = [];
    if (hold?.queue) hold.queue.push(text);
    else this.#send(text);
  }

  #decided(tab: string, hold: Promise<void> | undefined): void {
    clearTimeout(this.#tabs.get(tab));
    this.#tabs.delete(tab);
    if (hold) void hold.then(() => this.#release(tab));
    else this.#release(tab);
  }

  /** The hold of the page `targetId` opened by `openerId`: asked of the hooks once per page. */
  #hold(targetId: string, openerId: string): Promise<void> | undefined {
    if (!this.#targets.has(targetId)) this.#targets.set(targetId, this.#ask({ targetId, openerId }));
    return this.#targets.get(targetId);
  }

  /** The first hook's hold, bounded by HOLD_MAX_MS; never rejects. */
  #ask(page: OpenedPage): Promise<void> | undefined {
    for (const hook of this.#hooks) {
      let hold: Promise<void> | undefined;
      try {
        hold = hook(page);
      } catch {
        hold = undefined;
      }
      if (!hold) continue;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, HOLD_MAX_MS)));
      return Promise.race([hold.catch(() => undefined), late]).finally(() => clearTimeout(timer));
    }
    return undefined;
  }

  #release(sessionId: string): void {
    const hold = this.#holds.get(sessionId);
    this.#holds.delete(sessionId);
    for (const text of hold?.queue ?? []) this.#send(text);
  }
}

/** What the runner's recordings use of the drivers' pipe to record popups (BrowserDrivers.openedPages). */
export interface OpenedPages {
  /** Sets a hook on the pages the drivers' pages open (see OpenedPageGate.add); the function returned removes it. */
  hold(hook: OpenedPageHook): () => void;
  /** A CDP connection of the runner's own (never held), to attach such a page and set it up. */
  openConnection(): Promise<ObjectTransport>;
}
