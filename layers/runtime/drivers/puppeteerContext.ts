import type { Browser, BrowserContext } from "puppeteer-core";
import { keepPageFiles } from "../pageFiles";
import type { RunState } from "../runContext";
import { keepDownloads } from "./keptDownloads";
import type { ContextSetup, DriverContext } from "./driverContext";

/**
 * A puppeteer-core browser context of the run's browser (the default driver): a fresh, isolated
 * context, whose downloads the run keeps.
 */
export async function openPuppeteerContext(run: RunState, setup: ContextSetup): Promise<DriverContext<"puppeteer">> {
  void setup;
  const browser: Browser = await run.getBrowser();
  const context: BrowserContext = await browser.createBrowserContext();
  if (!run.ended && run.downloadsDir && run.artifacts) await keepDownloads(browser, context, run).catch(() => undefined);
  return {
    context,
    async newPage() {
      const page = await context.newPage();
      keepPageFiles(page);
      return page;
    },
    pages: () => context.pages(),
    close: () => context.close(),
  };
}
