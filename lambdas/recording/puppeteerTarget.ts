import type { Page } from "puppeteer-core";
import { type CdpChannel, type PageTarget, pageTarget } from "./pageTarget";

/** A puppeteer page as the runner's page hooks see it (a CDP session of its own, opened on first use). */
export function puppeteerTarget(page: Page): PageTarget {
  return pageTarget(
    () => page.createCDPSession() as unknown as Promise<CdpChannel>,
    () => page.url(),
    () => page.isClosed(),
  );
}
