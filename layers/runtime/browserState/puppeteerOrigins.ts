import type { BrowserContext, HTTPRequest, Page } from "puppeteer-core";
import type { OriginPage } from "./originStorage";

const EMPTY_DOCUMENT = { status: 200, contentType: "text/html", body: "<!doctype html><title></title>" };

/**
 * Script in the page. In a page the state layer answered itself there is no other script; in
 * a page of the site, the site could only misreport its own origin's storage, which is its own.
 */
function evaluateIn(page: Page): OriginPage["evaluate"] {
  return (fn, arg) => page.evaluate(fn as (arg: unknown) => unknown, arg) as never;
}

/**
 * An OriginPage on `page` (a page of the session's own): while borrowed, its requests never
 * leave the browser (each is answered with an empty document); given back, it is on
 * about:blank with its requests going out again. Borrowing the session's first page saves
 * opening one more (a page of a fresh context costs a renderer).
 */
export async function borrowedOriginPage(page: Page): Promise<OriginPage> {
  const answer = (request: HTTPRequest) => void request.respond(EMPTY_DOCUMENT).catch(() => undefined);
  await page.setRequestInterception(true);
  page.on("request", answer);
  return {
    async visit(origin) {
      await page.goto(`${origin}/`, { waitUntil: "domcontentloaded" });
    },
    evaluate: evaluateIn(page),
    async close() {
      try {
        await page.goto("about:blank");
      } finally {
        page.off("request", answer);
        await page.setRequestInterception(false);
      }
    },
  };
}

/** An OriginPage on a page of `context` opened for it and closed after. */
export async function helperOriginPage(context: BrowserContext): Promise<OriginPage> {
  const page = await context.newPage();
  const borrowed = await borrowedOriginPage(page);
  return { visit: borrowed.visit, evaluate: borrowed.evaluate, close: () => page.close() };
}

/** The context's open pages by the origin their main frame shows (http and https only). */
export async function pagesByOrigin(context: BrowserContext): Promise<Map<string, Page>> {
  const found = new Map<string, Page>();
  for (const page of await context.pages()) {
    try {
      const url = new URL(page.url());
      if ((url.protocol === "http:" || url.protocol === "https:") && !found.has(url.origin)) found.set(url.origin, page);
    } catch {
      // about:blank and the like
    }
  }
  return found;
}

/** An OriginPage that reads an origin already open in one of the context's pages, without navigating it. */
export function openOriginPage(page: Page): OriginPage {
  return { visit: async () => undefined, evaluate: evaluateIn(page), close: async () => undefined };
}
