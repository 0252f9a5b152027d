import type { BrowserContext, HTTPRequest } from "puppeteer-core";
import type { OriginPage } from "./originStorage";

/**
 * The puppeteer driver's OriginPage: a page of `context` whose requests never leave the
 * browser (each is answered with an empty document), so visiting an origin only gives script
 * its storage.
 */
export async function puppeteerOriginPage(context: BrowserContext): Promise<OriginPage> {
  const page = await context.newPage();
  await page.setRequestInterception(true);
  page.on("request", (request: HTTPRequest) => {
    void request.respond({ status: 200, contentType: "text/html", body: "<!doctype html><title></title>" }).catch(() => undefined);
  });
  return {
    async visit(origin) {
      await page.goto(`${origin}/`, { waitUntil: "domcontentloaded" });
    },
    evaluate: (fn, arg) => page.evaluate(fn as (arg: unknown) => unknown, arg) as never,
    close: () => page.close(),
  };
}
