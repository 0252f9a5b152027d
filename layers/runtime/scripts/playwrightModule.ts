/**
 * What `require("playwright")` and `require("playwright-core")` give an automation: playwright-core
 * itself (devices, errors, selectors, request, the types' classes), with a `chromium` whose
 * `launch()` connects to the run's own warm, sandboxed browser instead of starting one. Each
 * launch is a connection of its own (see lambdas/runner/drivers/cdpMux.ts): its contexts are
 * fresh and isolated, and its `close()` ends them and only them. Firefox, WebKit and any other
 * endpoint fail with a clear error.
 */
import type { Browser, BrowserContext, BrowserType, LaunchOptions, Page } from "playwright-core";
import { keepPageFiles, sessionRuns } from "../pageFiles";
import { beforeContextClose, contextsLeftToHost, currentRun, type OpenSession, type RunState } from "../runContext";
import { playwrightPageOpened, watchPlaywrightContext } from "../drivers/playwrightContext";
import { nameProxyFailures, playwrightProxy, type RunProxy } from "../sessionProxy";
import type { EvidencePage } from "../drivers/driverContext";
import { loadPlaywright } from "../drivers/loadPlaywright";


const ONLY_CHROMIUM = "browserfn runs Chromium only: use chromium.launch() (firefox and webkit are not available)";

/** The error of connect() / connectOverCDP() to an endpoint: a run reaches only its own browser. */
export function otherEndpointError(call: string, launch = "chromium.launch()"): Error {
  return new Error(`${call} is not available on browserfn: a run reaches only its own sandboxed browser. Use ${launch} (or Session.start() from browserfn/runtime): it connects to the run's warm browser.`);
}

type ContextOptions = NonNullable<Parameters<Browser["newContext"]>[0]>;

/**
 * The proxy a context of a launched browser goes through: its own `newContext({ proxy })`, else
 * `launch({ proxy })`'s, else the function's `proxy` setting (every session of its runs goes
 * through it, a script's launches too).
 */
function withProxy(run: RunState, launched: LaunchOptions["proxy"], options: ContextOptions | undefined): ContextOptions {
  if (options?.proxy) return options;
  const proxy = launched ?? (run.proxy ? playwrightProxy(run.proxy) : undefined);
  return proxy ? { ...options, proxy } : { ...options };
}

/**
 * The function's proxy where a context of a launch goes through it (its code gave none of its
 * own): its pages' navigations that it refuses or that cannot reach it fail naming it, as a
 * session's do. A proxy the script gives itself behaves exactly as in Playwright.
 */
function functionProxyOf(run: RunState, launched: LaunchOptions["proxy"], options: ContextOptions | undefined): RunProxy | undefined {
  return options?.proxy || launched ? undefined : run.proxy;
}

/** A launched browser, kept by the run until it closes (as a session is). */
function track(run: RunState, browser: Browser, launched: LaunchOptions["proxy"]): void {
  const openedAt = Date.now();
  let closing: Promise<void> | undefined;
  const closeConnection = browser.close.bind(browser);
  const session: OpenSession = {
    close() {
      if (closing) return closing;
      // What the recorders of the run's open pages hold is taken before the launch's pages go with it.
      // At the end of a run whose host disposes what it leaves, the connection's contexts are left to the host.
      const leave = contextsLeftToHost(run);
      closing = beforeContextClose(run)
        .then(() => (leave ? undefined : closeConnection()))
        .catch(() => undefined)
        .then(() => {
          run.browserMs += Date.now() - openedAt;
          run.sessions.delete(session);
        });
      return closing;
    },
    async pages(): Promise<EvidencePage[]> {
      return closing ? [] : browser.contexts().flatMap((context) => context.pages());
    },
  };
  run.sessions.add(session);
  // The user's close() goes through the run's account of it (browser time, the run's end).
  // Named functions: Playwright's errors name the method after the function that called it ("browser.newPage: …").
  Object.defineProperty(browser, "close", { value: function close(): Promise<void> { return session.close(); }, configurable: true });
  const openContext = browser.newContext.bind(browser);
  Object.defineProperty(browser, "newContext", {
    configurable: true,
    value: async function newContext(options?: ContextOptions): Promise<BrowserContext> {
      return watched(run, await openContext(withProxy(run, launched, options)), functionProxyOf(run, launched, options));
    },
  });
  const openPage = browser.newPage.bind(browser);
  Object.defineProperty(browser, "newPage", {
    configurable: true,
    value: async function newPage(options?: Parameters<Browser["newPage"]>[0]): Promise<Page> {
      // Playwright's browser.newPage opens its context through browser.newContext (the one
      // above: its proxy, and the function's failures named) and its page through that
      // context's newPage (recorded and watched live there).
      const page = await openPage(options);
      watched(run, page.context());
      keepPageFiles(page);
      return page;
    },
  });
}

/**
 * A context of a launch, as the run keeps it: its downloads and files kept, the pages the code
 * opens on it recorded and watched live, and, where it goes through the function's proxy, each
 * of its pages' failures through it naming it.
 */
function watched(run: RunState, context: BrowserContext, functionProxy?: RunProxy): BrowserContext {
  if (!sessionRuns.has(context)) {
    sessionRuns.set(context, run);
    watchPlaywrightContext(run, context);
    if (functionProxy) {
      // Each page once: those it has now, and each one it opens from here on ('page').
      const name = (page: Page) => nameProxyFailures(page as never, functionProxy);
      for (const page of context.pages()) name(page);
      context.on("page", name);
    }
    const openPage = context.newPage.bind(context);
    Object.defineProperty(context, "newPage", {
      configurable: true,
      value: async function newPage(): Promise<Page> {
        const page = await openPage();
        await playwrightPageOpened(run, page);
        return page;
      },
    });
  }
  return context;
}

/**
 * `chromium.launch(options)`: a browser over the run's own; its `proxy` applies to each of its
 * contexts (as in Playwright), the options that cannot apply are ignored.
 */
async function launch(options?: LaunchOptions): Promise<Browser> {
  const run = currentRun("chromium.launch()");
  if (!run.newPlaywright) throw new Error("chromium.launch() is not available where this run executes");
  if (run.deadline - Date.now() <= 0) throw new Error("The run has no time left to launch a browser");
  const browser = await run.newPlaywright();
  if (run.ended) {
    await browser.close().catch(() => undefined);
    throw new Error("The run ended before the browser was launched");
  }
  track(run, browser, options?.proxy);
  return browser;
}

/**
 * The options of `launchPersistentContext` that configure the browser's launch, not its context:
 * ignored (the deploy lists the ones that matter as warnings), as `launch()` ignores them.
 */
const LAUNCH_ONLY = new Set(["args", "artifactsDir", "channel", "chromiumSandbox", "downloadsPath", "env", "executablePath", "firefoxUserPrefs", "handleSIGHUP", "handleSIGINT", "handleSIGTERM", "headless", "ignoreDefaultArgs", "logger", "proxy", "slowMo", "timeout", "tracesDir", "devtools"]);

/** The context options of launchPersistentContext's `options`: every one but those of the launch. */
export function persistentContextOptions(options: Parameters<BrowserType["launchPersistentContext"]>[1]): ContextOptions {
  return Object.fromEntries(Object.entries(options ?? {}).filter(([key]) => !LAUNCH_ONLY.has(key))) as ContextOptions;
}

/**
 * `launchPersistentContext(userDataDir, options)`: a fresh context of a launch of its own (the
 * dir is ignored: a profile keeps a login between runs), with the options' proxy and every
 * context option it was given (a device's viewport and user agent, headers, permissions…), and,
 * as in Playwright, one blank page to begin with.
 */
async function launchPersistentContext(userDataDir: string, options?: Parameters<BrowserType["launchPersistentContext"]>[1]): Promise<BrowserContext> {
  void userDataDir;
  const browser = await launch(options?.proxy ? { proxy: options.proxy } : undefined);
  const context = await browser.newContext(persistentContextOptions(options));
  // As Playwright's persistent context does, it opens with one blank page (`context.pages()[0]`).
  await context.newPage();
  // Closing the persistent context ends its launch, as in Playwright.
  const closeContext = context.close.bind(context);
  Object.defineProperty(context, "close", { configurable: true, value: async () => {
    await closeContext().catch(() => undefined);
    await browser.close();
  } });
  return context;
}

function chromiumOf(real: BrowserType): BrowserType {
  return new Proxy(real, {
    get(target, key, receiver) {
      if (key === "launch") return launch;
      if (key === "launchPersistentContext") return launchPersistentContext;
      if (key === "connect") return () => Promise.reject(otherEndpointError("chromium.connect()"));
      if (key === "connectOverCDP") return () => Promise.reject(otherEndpointError("chromium.connectOverCDP()"));
      if (key === "launchServer") return () => Promise.reject(new Error("chromium.launchServer() is not available on browserfn: use chromium.launch()"));
      if (key === "executablePath") return () => "/browserfn/chromium";
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
}

function unavailable(real: BrowserType): BrowserType {
  return new Proxy(real, {
    get(target, key, receiver) {
      if (key === "launch" || key === "launchPersistentContext" || key === "connect" || key === "connectOverCDP" || key === "launchServer") {
        return () => Promise.reject(new Error(ONLY_CHROMIUM));
      }
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
}

let made: object | undefined;

/** The module an automation's `require("playwright")` / `require("playwright-core")` gets (made on first use). */
export function playwrightModule(): object {
  if (made) return made;
  const real = loadPlaywright();
  const chromium = chromiumOf(real.chromium);
  const module = {
    chromium,
    firefox: unavailable(real.firefox),
    webkit: unavailable(real.webkit),
    devices: real.devices,
    errors: real.errors,
    selectors: real.selectors,
    request: real.request,
  };
  made = { ...module, default: module };
  return made;
}
