/**
 * What Session.start adds to a plain context: the session's proxy and its profile. One door
 * for the Session class (openSession → the context's options, then `attach` once the context
 * exists), so the driver code stays as it was.
 */
import type { Browser, BrowserContext, Page } from "puppeteer-core";
import type { BrowserState } from "./browserState/browserState";
import type { RunState } from "./runContext";
import { checkProfileOption, fetchProfile, loadProfile, type OpenProfile } from "./sessionProfile";
import { type RunProxy, type SessionProxyOption, proxyPage, sessionProxy } from "./sessionProxy";

/** Session.start's options about state and network. */
export interface StateOptions {
  profile?: string;
  persist?: boolean;
  proxy?: SessionProxyOption | null;
}

/** A session's proxy and profile, between Session.start and the session's close. */
export interface SessionSetup {
  /** False when the session has neither a proxy nor a profile (nothing to apply). */
  active: boolean;
  /** What `createBrowserContext` takes. */
  contextOptions: { proxyServer?: string; proxyBypassList?: string[] };
  /** Loads the profile into the new context. */
  attach(browser: Browser, context: BrowserContext): Promise<void>;
  /** Each new page of the session: the proxy's credentials and errors. */
  preparePage(page: Page): Promise<void>;
  /** Before the context closes: the profile's state saved (with `persist`). */
  beforeClose(): Promise<void>;
}

const NOTHING: SessionSetup = {
  active: false,
  contextOptions: {},
  attach: async () => undefined,
  preparePage: async () => undefined,
  beforeClose: async () => undefined,
};

/** Checks the options and opens the profile (waiting for a writer's lease with `persist`); nothing to do without either. */
export async function openSession(run: RunState, options: StateOptions): Promise<SessionSetup> {
  checkProfileOption(options.profile, options.persist);
  const proxy: RunProxy | undefined = sessionProxy(options.proxy, run.proxy);
  if (!proxy && options.profile === undefined) return NOTHING;
  const persist = options.persist === true;
  let state: BrowserState | undefined;
  if (options.profile !== undefined) {
    if (!run.profiles) throw new Error("Profiles are not available to this run");
    state = await fetchProfile(run.profiles, options.profile, persist);
  }
  let opened: OpenProfile | undefined;
  return {
    active: true,
    contextOptions: proxy ? { proxyServer: proxy.server, ...(proxy.bypass.length > 0 ? { proxyBypassList: proxy.bypass } : {}) } : {},
    async attach(browser, context) {
      if (state && options.profile !== undefined && run.profiles) opened = await loadProfile(browser, context, run.profiles, options.profile, state, persist);
    },
    async preparePage(page) {
      if (opened) await opened.seed(page);
      if (proxy) await proxyPage(page, proxy);
    },
    async beforeClose() {
      const profile = opened;
      opened = undefined;
      if (profile) await profile.save();
    },
  };
}
