/**
 * What `require("puppeteer")` and `require("puppeteer-core")` give an automation: puppeteer-core
 * itself, with a `launch()` that gives a browser over the run's own warm, sandboxed browser
 * instead of starting one. Each launch is a fresh, isolated context (a browserfn session, with
 * its limits, evidence and kept downloads); the browser it returns sees that context as its
 * default, opens its pages there, and its `close()` (or `disconnect()`) ends that context and
 * the contexts it created, nothing else. `connect()` to any endpoint fails with a clear error.
 */
import type { Browser, BrowserContext, LaunchOptions, Page } from "puppeteer-core";
import { Session } from "../index";
import { currentRun } from "../runContext";
import { otherEndpointError } from "./playwrightModule";
import { loadPuppeteer } from "./loadPuppeteer";

/** Minutes a launched browser may stay open: the run's own deadline closes it first. */
const LAUNCH_TIMEOUT_MINUTES = 24 * 60;

/** The viewport puppeteer.launch() gives each page when its options name none (puppeteer's own default). */
export const PUPPETEER_DEFAULT_VIEWPORT = { width: 800, height: 600 } as const;

/**
 * `puppeteer.launch(options)`: a browser over the run's own; the options that cannot apply are
 * ignored. As a launched puppeteer browser does, it has one blank page to begin with, listed
 * first (made when the script first asks for its pages: a script that only calls `newPage()`
 * pays nothing for it), and its pages get `defaultViewport` (800×600 unless the options say
 * otherwise; `null` for the window's own size).
 */
async function launch(options?: LaunchOptions): Promise<Browser> {
  currentRun("puppeteer.launch()");
  const viewport = options?.defaultViewport === undefined ? PUPPETEER_DEFAULT_VIEWPORT : options.defaultViewport;
  const first = await Session.start({ timeout_minutes: LAUNCH_TIMEOUT_MINUTES });
  const real = first.context.browser();
  const sessions: Session[] = [first];
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => (closing ??= Promise.all(sessions.map((session) => session.close())).then(() => undefined));
  const contexts = (): BrowserContext[] => sessions.map((session) => session.context);
  /** A context's pages get the launch's viewport. */
  const sized = (context: BrowserContext, open: () => Promise<Page>): BrowserContext => {
    Object.defineProperty(context, "newPage", {
      configurable: true,
      value: async (): Promise<Page> => {
        const page = await open();
        if (viewport) await page.setViewport(viewport);
        return page;
      },
    });
    return context;
  };
  sized(first.context, () => first.newPage());
  /**
   * The launch's first blank page, made once the script first asks for the launch's pages
   * (whether or not it opened pages of its own before), and listed first while it is open, as
   * puppeteer lists a launched browser's first tab.
   */
  let blank: Promise<Page> | undefined;
  const contextPages = first.context.pages.bind(first.context);
  const firstContextPages = async (): Promise<Page[]> => {
    const made = await (blank ??= first.context.newPage());
    const open = await contextPages();
    return open.includes(made) ? [made, ...open.filter((page) => page !== made)] : open;
  };
  Object.defineProperty(first.context, "pages", { configurable: true, value: firstContextPages });
  const pages = async (): Promise<Page[]> => (await Promise.all(contexts().map((context) => context.pages()))).flat();
  const overrides: Partial<Record<keyof Browser, unknown>> = {
    newPage: (): Promise<Page> => first.context.newPage(),
    close,
    disconnect: close,
    defaultBrowserContext: () => first.context,
    browserContexts: contexts,
    createBrowserContext: async (): Promise<BrowserContext> => {
      const session = await Session.start({ timeout_minutes: LAUNCH_TIMEOUT_MINUTES });
      sessions.push(session);
      return sized(session.context, () => session.newPage());
    },
    pages,
    targets: () => real.targets().filter((target) => contexts().includes(target.browserContext())),
    // Closed (or disconnected) is what the script sees after close(), as with a browser of its own.
    isConnected: () => closing === undefined && real.connected,
    process: () => null,
    wsEndpoint: () => {
      throw otherEndpointError("browser.wsEndpoint()", "puppeteer.launch()");
    },
  };
  return new Proxy(real, {
    get(target, key, receiver) {
      if (key === "connected") return closing === undefined && real.connected;
      if (typeof key === "string" && Object.hasOwn(overrides, key)) return overrides[key as keyof Browser];
      const value = Reflect.get(target, key, receiver) as unknown;
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

function connect(): Promise<never> {
  return Promise.reject(otherEndpointError("puppeteer.connect()", "puppeteer.launch()"));
}

let made: object | undefined;

/** The module an automation's `require("puppeteer")` / `require("puppeteer-core")` gets. */
export function puppeteerModule(): object {
  if (made) return made;
  const real = loadPuppeteer() as unknown as Record<string, unknown> & { default: object };
  const instance = new Proxy(real.default, {
    get(target, key, receiver) {
      if (key === "launch") return launch;
      if (key === "connect") return connect;
      if (key === "executablePath") return () => "/browserfn/chromium";
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
  made = new Proxy(real, {
    get(target, key, receiver) {
      if (key === "default") return instance;
      if (key === "launch") return launch;
      if (key === "connect") return connect;
      if (key === "executablePath") return () => "/browserfn/chromium";
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
  return made;
}
