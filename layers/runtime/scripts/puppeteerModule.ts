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

/** `puppeteer.launch(options)`: a browser over the run's own; the options that cannot apply are ignored. */
async function launch(options?: LaunchOptions): Promise<Browser> {
  void options;
  currentRun("puppeteer.launch()");
  const first = await Session.start({ timeout_minutes: LAUNCH_TIMEOUT_MINUTES });
  const real = first.context.browser();
  const sessions: Session[] = [first];
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => (closing ??= Promise.all(sessions.map((session) => session.close())).then(() => undefined));
  const contexts = (): BrowserContext[] => sessions.map((session) => session.context);
  const overrides: Partial<Record<keyof Browser, unknown>> = {
    newPage: (): Promise<Page> => first.newPage(),
    close,
    disconnect: close,
    defaultBrowserContext: () => first.context,
    browserContexts: contexts,
    createBrowserContext: async (): Promise<BrowserContext> => {
      const session = await Session.start({ timeout_minutes: LAUNCH_TIMEOUT_MINUTES });
      sessions.push(session);
      return session.context;
    },
    pages: async (): Promise<Page[]> => (await Promise.all(contexts().map((context) => context.pages()))).flat(),
    targets: () => real.targets().filter((target) => contexts().includes(target.browserContext())),
    process: () => null,
    wsEndpoint: () => {
      throw otherEndpointError("browser.wsEndpoint()");
    },
  };
  return new Proxy(real, {
    get(target, key, receiver) {
      if (typeof key === "string" && Object.hasOwn(overrides, key)) return overrides[key as keyof Browser];
      const value = Reflect.get(target, key, receiver) as unknown;
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

function connect(): Promise<never> {
  return Promise.reject(otherEndpointError("puppeteer.connect()"));
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
