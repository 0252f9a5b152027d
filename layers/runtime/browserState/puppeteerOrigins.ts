import type { Browser, BrowserContext, CDPSession, HTTPRequest, Page, Target } from "puppeteer-core";
import { readCookies, writeCookies } from "./cookies";
import type { PageCdp, RestorePage } from "./lazyRestore";
import { EMPTY_DOCUMENT, type OriginPage, RESTORE_PATH } from "./originStorage";
import { originPages } from "./originPages";
import { type StateContext, webOrigin } from "./stateContext";


/** One browser-level CDP session per browser, for the Storage domain (made on first use). */
const storageSessions = new WeakMap<Browser, Promise<CDPSession>>();

/**
 * The browser's Storage session (made now if it is not yet): a session with a profile asks for
 * it as it starts, so that the profile's cookies, once fetched, take one round trip to the
 * browser, not two.
 */
export function storageSession(browser: Browser): Promise<CDPSession> {
  let session = storageSessions.get(browser);
  if (!session) {
    session = browser.target().createCDPSession();
    storageSessions.set(browser, session);
    session.catch(() => storageSessions.delete(browser));
  }
  return session;
}

/**
 * Script in the page. In a page the state layer answered itself there is no other script; in
 * a page of the site, the site could only misreport its own origin's storage, which is its own.
 */
function evaluateIn(page: Page): OriginPage["evaluate"] {
  return (fn, arg) => page.evaluate(fn as (arg: unknown) => unknown, arg) as never;
}

/**
 * An OriginPage on `page` (a helper page of the session's context, which the save opens to read
 * the storage of origins no open page shows): while borrowed, its requests never leave the
 * browser (each is answered with an empty document); given back, its requests go out again.
 */
export async function borrowedOriginPage(page: Page): Promise<OriginPage> {
  let html = EMPTY_DOCUMENT;
  const answer = (request: HTTPRequest) => void request.respond({ status: 200, contentType: "text/html", body: html }).catch(() => undefined);
  await page.setRequestInterception(true);
  page.on("request", answer);
  return {
    async visit(origin, document = EMPTY_DOCUMENT) {
      html = document;
      await page.goto(`${origin}${RESTORE_PATH}`, { waitUntil: "domcontentloaded" });
    },
    evaluate: evaluateIn(page),
    async close() {
      page.off("request", answer);
      await page.setRequestInterception(false);
    },
  };
}

/** A page puppeteer is still making: its target (there already) and the page to come. */
export interface PageInTheMaking {
  inTheMaking: true;
  target: Target;
  page: Promise<Page>;
}

/** The session puppeteer attached to `target` (its page's own), where this puppeteer-core has it. */
function targetSession(target: Target): CDPSession | undefined {
  const session = (target as unknown as { _session?: () => CDPSession | undefined })._session?.();
  return session && typeof session.send === "function" ? session : undefined;
}

/**
 * A page of the session for the profile's lazy restore: a CDP session of its own (the first
 * page's opened on its target, while puppeteer makes the page), the page's scripts for new
 * documents.
 */
function restorePage(of: Page | PageInTheMaking): RestorePage {
  const making = "inTheMaking" in of ? of : undefined;
  return {
    openCdp: async () => (await (making ? making.target : (of as Page)).createCDPSession()) as unknown as PageCdp,
    async addScript(source) {
      // On the target's own session while puppeteer still makes the page (the command puppeteer
      // would send, on the session it sends it on: before any script the code adds there).
      const session = making && targetSession(making.target);
      if (session) {
        const { identifier } = await session.send("Page.addScriptToEvaluateOnNewDocument", { source });
        return async () => void (await session.send("Page.removeScriptToEvaluateOnNewDocument", { identifier }));
      }
      const page = making ? await making.page : (of as Page);
      const { identifier } = await page.evaluateOnNewDocument(source);
      return () => page.removeScriptToEvaluateOnNewDocument(identifier);
    },
  };
}

/** A puppeteer-core context of `browser` as the profile layer sees it (cookies through the browser's CDP Storage domain). */
export function puppeteerStateContext(browser: Browser, context: BrowserContext, newPage: () => Promise<Page> = () => context.newPage()): StateContext<Page, Page | PageInTheMaking> {
  return {
    writeCookies: async (cookies) => writeCookies(await storageSession(browser), context.id, cookies),
    readCookies: async () => readCookies(await storageSession(browser), context.id),
    restorePage,
    ...originPages(() => context.pages(), newPage, borrowedOriginPage, evaluateIn),
    followOrigins(seen) {
      const follow = (target: Target) => {
        if (target.type() !== "page") return;
        const origin = webOrigin(target.url());
        if (origin) seen(origin);
      };
      context.on("targetcreated", follow);
      context.on("targetchanged", follow);
      return () => {
        context.off("targetcreated", follow);
        context.off("targetchanged", follow);
      };
    },
  };
}
