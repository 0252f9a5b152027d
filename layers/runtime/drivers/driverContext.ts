import type { BrowserContext as PuppeteerContext, Page as PuppeteerPage } from "puppeteer-core";
import type { BrowserContext as PlaywrightContext, Page as PlaywrightPage } from "playwright-core";
import type { SessionSetup } from "../sessionSetup";

/** The drivers a session can speak: puppeteer-core (the default) or Playwright (playwright-core). */
export type Driver = "puppeteer" | "playwright";

/** What each driver's session gives: its page and its browser context. */
export interface DriverTypes {
  puppeteer: { page: PuppeteerPage; context: PuppeteerContext };
  playwright: { page: PlaywrightPage; context: PlaywrightContext };
}

/** What the runner needs of a page of either driver for a failed run's evidence (failureEvidence). */
export interface EvidencePage {
  url(): string;
  isClosed(): boolean;
  screenshot(options: { type: "png" }): Promise<Uint8Array>;
  content(): Promise<string>;
}

/** One session's browser context, whichever driver opened it. */
export interface DriverContext<D extends Driver = Driver> {
  readonly context: DriverTypes[D]["context"];
  newPage(): Promise<DriverTypes[D]["page"]>;
  /** Its open pages (the evidence of a failed run). */
  pages(): Promise<EvidencePage[]>;
  /** Closes the context and its pages; a context whose browser went away is closed already. */
  close(): Promise<void>;
}

/**
 * The per-context hook: what a session asks of its context beyond isolation, applied by each
 * driver when it opens the context (a proxy, a saved state; see profiles and proxies), and what
 * runs once it is open. Both drivers take it; features add fields here, not branches in Session.
 */
export interface ContextSetup {
  /** Called with the context once it is open, before the session is handed out (e.g. to load a profile). */
  onOpen?: (context: DriverContext) => Promise<void>;
  /** The session's proxy and profile (sessionSetup.ts): each driver opens its context with the proxy and attaches the profile. */
  state?: SessionSetup;
}
