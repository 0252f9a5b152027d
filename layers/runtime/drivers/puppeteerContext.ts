import type { Browser, BrowserContext, Page, Target } from "puppeteer-core";
import { puppeteerTarget } from "../../../lambdas/recording/puppeteerTarget";
import { puppeteerStateContext, storageSession } from "../browserState/puppeteerOrigins";
import { keepPageFiles } from "../pageFiles";
import type { RunState } from "../runContext";
import { proxyPage, puppeteerProxyOptions } from "../sessionProxy";
import { keepDownloads } from "./keptDownloads";
import type { ContextSetup, DriverContext } from "./driverContext";

/**
 * A puppeteer-core browser context of the run's browser (the default driver): a fresh, isolated
 * context, whose downloads the run keeps, with the session's proxy and profile.
 */
export async function openPuppeteerContext(run: RunState, setup: ContextSetup): Promise<DriverContext<"puppeteer">> {
  const browser: Browser = await run.getBrowser();
  const state = setup.state;
  // A profile's cookies go in through the browser's Storage session: attached while the context is made.
  if (state?.opensFirstPage) storageSession(browser).catch(() => undefined);
  const context: BrowserContext = await browser.createBrowserContext(puppeteerProxyOptions(state?.proxy));
  // The context's downloads are set up beside the rest (the first page's making, the profile's
  // loading, the caller's own first newPage): no page is handed out before they are.
  const downloadsReady = !run.ended && run.downloadsDir && run.artifacts ? keepDownloads(browser, context, run).catch(() => undefined) : undefined;
  const openPage = context.newPage.bind(context);
  const setUp = async (page: Page, seeded?: Promise<void>): Promise<Page> => {
    keepPageFiles(page);
    if (state?.active) {
      await (seeded ?? state.seedPage(page));
      if (state.proxy) await proxyPage(page, state.proxy);
    }
    return page;
  };
  // With a profile: the first page opens while the profile is fetched and loaded, and is set up
  // once it is; it is armed for the restore from its target, while puppeteer makes the page.
  const firstTarget = state?.opensFirstPage ? nextPageTarget(context) : undefined;
  const opening = state?.opensFirstPage ? openPage() : undefined;
  opening?.catch(() => undefined);
  let first: Promise<Page> | undefined;
  try {
    await state?.attach(puppeteerStateContext(browser, context, openPage));
    if (opening && firstTarget && state) {
      const seeded = firstTarget.target.then((target) => state.seedPage({ inTheMaking: true, target, page: opening }));
      seeded.catch(() => undefined);
      first = opening.then((page) => setUp(page, seeded));
      void opening.catch(() => undefined).finally(firstTarget.stop);
    }
    first?.catch(() => undefined);
  } catch (error) {
    await context.close().catch(() => undefined);
    throw error;
  }
  const newPage = async (): Promise<Page> => {
    const ready = first;
    first = undefined;
    const [page] = await Promise.all([ready ?? openPage().then((opened) => setUp(opened)), downloadsReady]);
    // The runner's page hooks (recordings, the live view), before the page loads anything.
    await run.pageOpened?.(puppeteerTarget(page));
    return page;
  };
  // A page the code opens on the context itself is set up as well, and recorded and watched live.
  Object.defineProperty(context, "newPage", { configurable: true, value: newPage });
  return {
    context,
    newPage,
    pages: () => context.pages(),
    close: () => context.close(),
  };
}

/**
 * The next page target of `context` (its first page's, while puppeteer makes the page); `stop`
 * stops waiting (a page that never came: the promise is left unsettled, nothing waits on it).
 */
function nextPageTarget(context: BrowserContext): { target: Promise<Target>; stop: () => void } {
  let created: (found: Target) => void = () => undefined;
  const target = new Promise<Target>((resolve) => {
    created = (found) => {
      if (found.type() !== "page") return;
      context.off("targetcreated", created);
      resolve(found);
    };
    context.on("targetcreated", created);
  });
  return { target, stop: () => void context.off("targetcreated", created) };
}
