import type { Browser, Page } from "puppeteer-core";

/**
 * A new page of `browser` at 1280×900 that notes, in `problems`, every console error or
 * warning, page error and CSP violation, and in `requested` (when given) every URL it asks for.
 */
export async function watchedPage(browser: Browser, problems: string[], requested?: string[]): Promise<Page> {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warn") problems.push(`console ${message.type()}: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`page error: ${String(error)}`));
  if (requested) page.on("request", (request) => requested.push(request.url()));
  await page.evaluateOnNewDocument(() => {
    document.addEventListener("securitypolicyviolation", (event) => console.error(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`));
  });
  return page;
}
