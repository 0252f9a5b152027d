import type { Browser } from "puppeteer-core";

/**
 * Leaves a warm browser as a new run should find it: closes every context but the default
 * one, every page of the default context, and deletes the default context's cookies.
 * Errors are swallowed: a browser that went away has nothing left to reset.
 */
export async function resetBrowser(browser: Browser): Promise<void> {
  if (!browser.connected) return;
  const fallback = browser.defaultBrowserContext();
  const ignore = (): undefined => undefined;
  await Promise.all(
    browser
      .browserContexts()
      .filter((context) => context !== fallback)
      .map((context) => context.close().catch(ignore)),
  );
  const pages = await fallback.pages().catch((): never[] => []);
  await Promise.all(pages.map((page) => page.close().catch(ignore)));
  const cookies = await browser.cookies().catch((): never[] => []);
  if (cookies.length > 0) await browser.deleteCookie(...cookies).catch(ignore);
}
