import type { Browser, BrowserContext, Download, Page } from "playwright-core";
import { type CdpChannel, pageTarget } from "../../../lambdas/recording/pageTarget";
import { playwrightStateContext } from "../browserState/playwrightOrigins";
import { keepPageFiles } from "../pageFiles";
import type { RunState } from "../runContext";
import { nameProxyFailures, playwrightProxy } from "../sessionProxy";
import { keepDownload } from "./keptDownloads";
import { holdPageCdp } from "./sharedPageCdp";
import type { ContextSetup, DriverContext } from "./driverContext";

/**
 * A Playwright browser context of the run's browser (`Session.start({ driver: "playwright" })`),
 * through the run's Playwright connection to the same warm browser the puppeteer driver uses
 * (see lambdas/runner/drivers/cdpMux.ts). Its downloads land in the run's downloads folder (the
 * host keeps every download there) and are kept as artifacts, as the puppeteer driver's are.
 * The session's proxy is Playwright's own per-context proxy (its credentials answered by
 * Playwright for every page, popups included); its profile is loaded as the puppeteer driver
 * loads it, in the same format (see sessionProfile.ts).
 */
export async function openPlaywrightContext(run: RunState, setup: ContextSetup): Promise<DriverContext<"playwright">> {
  if (!run.getPlaywright) throw new Error('Session.start({ driver: "playwright" }) is not available where this run executes');
  const state = setup.state;
  const browser: Browser = await run.getPlaywright();
  const context: BrowserContext = await browser.newContext({ viewport: null, acceptDownloads: true, ...(state?.proxy ? { proxy: playwrightProxy(state.proxy) } : {}) });
  watchPlaywrightContext(run, context);
  const openPage = context.newPage.bind(context);
  const setUp = async (page: Page): Promise<Page> => {
    if (state?.active) {
      await state.seedPage(page);
      if (state.proxy) nameProxyFailures(page as never, state.proxy);
    }
    return page;
  };
  // With a profile: the first page opens while the profile is fetched and loaded, and is set up once it is.
  const opening = state?.opensFirstPage ? openPage() : undefined;
  opening?.catch(() => undefined);
  let first: Promise<Page> | undefined;
  try {
    await state?.attach(playwrightStateContext(context, openPage));
    first = opening?.then(setUp);
    first?.catch(() => undefined);
  } catch (error) {
    await context.close().catch(() => undefined);
    throw error;
  }
  const newPage = async (): Promise<Page> => {
    const ready = first;
    first = undefined;
    const page = ready ? await ready : await setUp(await openPage());
    await playwrightPageOpened(run, page);
    return page;
  };
  // A page the code opens on the context itself is set up as well, and recorded and watched live.
  Object.defineProperty(context, "newPage", { configurable: true, value: newPage });
  return {
    context,
    newPage,
    pages: async () => context.pages(),
    close: () => context.close(),
  };
}

/** The runner's page hooks (recordings, the live view) on a Playwright page, before it loads anything. */
export async function playwrightPageOpened(run: RunState, page: Page): Promise<void> {
  // On the page's one session of browserfn's own (the profile's restore may hold it already).
  await run.pageOpened?.(pageTarget(() => holdPageCdp(page) as Promise<CdpChannel>, () => page.url(), () => page.isClosed()));
}

/**
 * Makes the pages of a Playwright context of `run` keep their downloads as artifacts, and the
 * files of `screenshot({ path })` and `pdf({ path })` too (see pageFiles).
 */
export function watchPlaywrightContext(run: RunState, context: BrowserContext): void {
  const keepingDownloads = run.downloadsDir !== undefined && run.artifacts !== undefined;
  const watch = (page: Page) => {
    keepPageFiles(page);
    if (keepingDownloads) page.on("download", (download) => keepPlaywrightDownload(run, download));
  };
  for (const page of context.pages()) watch(page);
  context.on("page", watch);
}

/** Keeps a Playwright download once it finished (the run's end waits for it, a little). */
function keepPlaywrightDownload(run: RunState, download: Download): void {
  const finished = download
    .path()
    .then((file) => keepDownload(run, download.suggestedFilename(), file))
    .catch((error: unknown) => console.error(`[browserfn] download ${download.suggestedFilename()} not kept: ${(error as Error).message}`));
  run.pending.add(finished);
  void finished.finally(() => run.pending.delete(finished));
}
