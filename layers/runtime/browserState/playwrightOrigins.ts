import type { BrowserContext, CDPSession, Cookie, Frame, Page } from "playwright-core";
import type { StoredCookie } from "./browserState";
import { EMPTY_DOCUMENT, jsonCall, type OriginPage, RESTORE_PATH } from "./originStorage";
import { liveCookies } from "./cookies";
import type { PageCdp, RestorePage } from "./lazyRestore";
import { originPages } from "./originPages";
import { type StateContext, webOrigin } from "./stateContext";
import { holdPageCdp } from "../drivers/sharedPageCdp";

function evaluateIn(page: Page): OriginPage["evaluate"] {
  return async (fn, arg) => JSON.parse((await page.evaluate(jsonCall(fn, arg))) as string) as never;
}

/**
 * The same through a CDP session of the page: in the document the page shows now (the borrowed
 * page's own, where Playwright's evaluate would first wait to hear of the new document's context).
 */
function evaluateOver(cdp: CDPSession): OriginPage["evaluate"] {
  return async (fn, arg) => {
    const answer = (await cdp.send("Runtime.evaluate", { expression: jsonCall(fn, arg), awaitPromise: true, returnByValue: true })) as {
      result: { value?: unknown };
      exceptionDetails?: { text: string; exception?: { description?: string } };
    };
    if (answer.exceptionDetails) throw new Error(answer.exceptionDetails.exception?.description ?? answer.exceptionDetails.text);
    return JSON.parse(String(answer.result.value)) as never;
  };
}

/**
 * As puppeteerOrigins' borrowedOriginPage, on a Playwright page: while borrowed, its requests for
 * RESTORE_PATH are answered in the browser by a CDP session of its own (Fetch with that one
 * pattern: a `page.route` would send every request of the page through Playwright's router).
 */
async function borrowedOriginPage(page: Page): Promise<OriginPage> {
  const cdp = await page.context().newCDPSession(page);
  let body = Buffer.from(EMPTY_DOCUMENT).toString("base64");
  cdp.on("Fetch.requestPaused", (event: { requestId: string }) => {
    void cdp
      .send("Fetch.fulfillRequest", { requestId: event.requestId, responseCode: 200, responseHeaders: [{ name: "content-type", value: "text/html" }], body })
      .catch(() => undefined);
  });
  await cdp.send("Fetch.enable", { patterns: [{ urlPattern: `*${RESTORE_PATH}`, requestStage: "Request" }] });
  return {
    async visit(origin, html = EMPTY_DOCUMENT) {
      body = Buffer.from(html).toString("base64");
      await page.goto(`${origin}${RESTORE_PATH}`, { waitUntil: "domcontentloaded" });
    },
    evaluate: evaluateOver(cdp),
    close: () => cdp.detach(),
  };
}

/**
 * A page of the session for the profile's lazy restore: a hold on the page's CDP session (shared
 * with the runner's page hooks, see sharedPageCdp), and the page's init scripts.
 */
function restorePage(page: Page): RestorePage {
  return {
    openCdp: (): Promise<PageCdp> => holdPageCdp(page),
    async addScript(source) {
      const added = await page.addInitScript(source);
      return () => added.dispose();
    },
  };
}

/** A Playwright cookie as a profile keeps it (the same fields the puppeteer driver keeps from CDP). */
function storedCookie(cookie: Cookie): StoredCookie {
  const kept: StoredCookie = { name: cookie.name, value: cookie.value, domain: cookie.domain, path: cookie.path, httpOnly: cookie.httpOnly, secure: cookie.secure };
  if (cookie.expires > 0) kept.expires = cookie.expires;
  if (cookie.sameSite) kept.sameSite = cookie.sameSite;
  return kept;
}

/** A Playwright context as the profile layer sees it (cookies through its own cookie API: CDP Storage.getCookies/setCookies underneath). */
export function playwrightStateContext(context: BrowserContext, newPage: () => Promise<Page> = () => context.newPage()): StateContext<Page> {
  return {
    async writeCookies(cookies) {
      // Playwright marks a session cookie with expires −1.
      const live = liveCookies(cookies, Date.now() / 1000).map((cookie) => ({ ...cookie, expires: cookie.expires ?? -1 }));
      if (live.length > 0) await context.addCookies(live);
    },
    readCookies: async () => (await context.cookies()).map(storedCookie),
    restorePage,
    ...originPages(() => context.pages(), newPage, borrowedOriginPage, evaluateIn),
    followOrigins(seen) {
      const navigated = (frame: Frame) => {
        if (frame.parentFrame()) return;
        const origin = webOrigin(frame.url());
        if (origin) seen(origin);
      };
      const watch = (page: Page) => page.on("framenavigated", navigated);
      for (const page of context.pages()) watch(page);
      context.on("page", watch);
      return () => {
        context.off("page", watch);
        for (const page of context.pages()) page.off("framenavigated", navigated);
      };
    },
  };
}
