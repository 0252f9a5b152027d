import type { Browser } from "puppeteer-core";
import type { Browser as PlaywrightBrowser } from "playwright-core";
import { CdpMux, type TextTransport } from "./cdpMux";
import type { OpenedPages } from "./openedPageGate";

/** The run's browser as each driver sees it, over one CDP pipe (see CdpMux). */
export interface BrowserDrivers {
  /** puppeteer-core's Browser on the pipe's root session: connected on first use, and again after the pipe closed. */
  getBrowser(): Promise<Browser>;
  /** Playwright's Browser on a session of its own on the same pipe: connected on first use, likewise. */
  getPlaywright(): Promise<PlaywrightBrowser>;
  /** A Playwright connection of its own on the same pipe (a script's `chromium.launch()`): its `close()` ends only it. */
  newPlaywright(): Promise<PlaywrightBrowser>;
  /** The pipe's hold on the pages the drivers' pages open, and a connection of the runner's own (the recordings record popups with them). */
  openedPages(): Promise<OpenedPages>;
}

export interface DriverDeps {
  /** A fresh CDP pipe to the (warm) browser: the host's relay locally, the launched Chromium's pipe on Lambda. */
  openPipe: () => Promise<TextTransport>;
  /** puppeteer-core's connect (the runner's own copy). */
  connectPuppeteer: (transport: TextTransport) => Promise<Browser>;
  /** playwright-core's `chromium.connectOverCDP(transport, options)` (loaded when first needed). */
  connectPlaywright: (mux: CdpMux) => Promise<PlaywrightBrowser>;
}

/**
 * Both drivers over one pipe: the pipe (and its multiplexer) is opened by whichever driver is
 * asked for first; the other joins it. When the pipe closes (the browser died), both are
 * forgotten and the next call opens a fresh pipe.
 */
export function browserDrivers(deps: DriverDeps): BrowserDrivers {
  let mux: Promise<CdpMux> | undefined;
  let puppeteer: Promise<Browser> | undefined;
  let playwright: Promise<PlaywrightBrowser> | undefined;
  const forget = () => {
    mux = undefined;
    puppeteer = undefined;
    playwright = undefined;
  };
  const pipe = (): Promise<CdpMux> => {
    mux ??= deps.openPipe().then(
      (transport) => {
        const made = new CdpMux(transport);
        const previous = transport.onclose;
        transport.onclose = () => {
          forget();
          previous?.();
        };
        return made;
      },
      (error: unknown) => {
        mux = undefined;
        throw error;
      },
    );
    return mux;
  };
  const once = <T>(make: () => Promise<T>, clear: () => void): Promise<T> =>
    make().catch((error: unknown) => {
      clear();
      throw error;
    });
  return {
    getBrowser() {
      puppeteer ??= once(
        async () => deps.connectPuppeteer((await pipe()).root),
        () => (puppeteer = undefined),
      );
      return puppeteer;
    },
    getPlaywright() {
      playwright ??= once(
        async () => deps.connectPlaywright(await pipe()),
        () => (playwright = undefined),
      );
      return playwright;
    },
    async newPlaywright() {
      return deps.connectPlaywright(await pipe());
    },
    async openedPages() {
      const mux = await pipe();
      return { hold: (hook) => mux.holdOpenedPages(hook), openConnection: () => mux.openConnection({ gated: false }) };
    },
  };
}
