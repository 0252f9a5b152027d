import type { Browser, BrowserContext } from "puppeteer-core";
import { puppeteerTarget } from "../../../lambdas/recording/puppeteerTarget";
import { keepPageFiles } from "../pageFiles";
import type { RunState } from "../runContext";
import { keepDownloads } from "./keptDownloads";
import type { ContextSetup, DriverContext } from "./driverContext";

/**
 * A puppeteer-core browser context of the run's browser (the default driver): a fresh, isolated
 * context, whose downloads the run keeps.
 */
export async function openPuppeteerContext(run: RunState, setup: ContextSetup): Promise<DriverContext<"puppeteer">> {
  const browser: Browser = await run.getBrowser();
  const context: BrowserContext = await browser.createBrowserContext(setup.state?.contextOptions);
  if (!run.ended && run.downloadsDir && run.artifacts) await keepDownloads(browser, context, run).catch(() => undefined);
  try {
    await setup.state?.attach(browser, context);
  } catch (error) {
    await context.close().catch(() => undefined);
    throw error;
  }
  return {
    context,
    async newPage() {
      const page = await context.newPage();
      keepPageFiles(page);
      await setup.state?.preparePage(page);
      // The runner's page hooks (recordings, the live view), before the page loads anything.
      await run.pageOpened?.(puppeteerTarget(page));
      return page;
    },
    pages: () => context.pages(),
    close: () => context.close(),
  };
}
