/**
 * The door through which the runner's page hooks (recordings, the live view) reach a page of a
 * run, whichever driver made it: a CDP session of the page's own target, opened only when a
 * hook asks (a run that records nothing and that no one watches opens none).
 *
 * Puppeteer: `{ cdp: () => page.createCDPSession(), … }` (see puppeteerTarget).
 * Playwright: `{ cdp: () => holdPageCdp(page), url: () => page.url(), closed: () => page.isClosed() }` (the
 * page's one session of browserfn's own, which a profile's restore shares: see sharedPageCdp).
 */

/** The part of a CDP session the hooks use (puppeteer's CDPSession and Playwright's both fit). */
export interface CdpChannel {
  send(method: string, params?: Record<string, unknown>): Promise<unknown>;
  on(event: string, listener: (params: never) => void): unknown;
}

/** One page of a run, as a driver hands it to the runner when it opens it (before the page loads anything). */
export interface PageTarget {
  /** A CDP session of the page (opened on the first call; later calls give the same one). */
  cdp(): Promise<CdpChannel>;
  /** The page's URL now. */
  url(): string;
  /** True once the page is closed. */
  closed(): boolean;
  /**
   * Told once the hooks' commands to the page are sent (not answered): a page the browser holds
   * before it loads anything (a popup, see popupRecorder) is let go then. The session runs its
   * commands in order, so they apply before the page goes on; a page held answers some of them
   * only once let go.
   */
  commandsSent?(): void;
}

/** What the runner does with each page a run opens (RunLimits.pageOpened). */
export type PageOpened = (page: PageTarget) => Promise<void>;

/** A PageTarget whose CDP session is opened once, on first use, by `open`. */
export function pageTarget(open: () => Promise<CdpChannel>, url: () => string, closed: () => boolean): PageTarget {
  let session: Promise<CdpChannel> | undefined;
  return {
    cdp: () => (session ??= open()),
    url,
    closed,
  };
}
