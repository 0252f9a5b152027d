/**
 * What Session.start adds to a plain context: the session's proxy and its profile. One door
 * for the Session class (openSession → the proxy each driver opens its context with, then
 * `attach` once the context exists), so the drivers share one profile format and one lease.
 */
import type { BrowserState } from "./browserState/browserState";
import type { StateContext } from "./browserState/stateContext";
import type { RunState } from "./runContext";
import { checkProfileOption, fetchProfile, loadProfile, type OpenProfile } from "./sessionProfile";
import { type RunProxy, type SessionProxyOption, sessionProxy } from "./sessionProxy";

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
  /**
   * True with a profile: the driver opens the session's first page while the profile is fetched
   * and loaded (a page costs a renderer; the fetch, the cookies and the page's arming for the
   * restore then take none of the caller's time), and hands it out at the first `newPage()`.
   */
  opensFirstPage: boolean;
  /** The proxy the driver opens the context with (absent: none). */
  proxy?: RunProxy;
  /** Loads the profile into the new context (its cookies now, its storage into the first page). */
  attach(context: StateContext): Promise<void>;
  /** Before the session's first page is handed out, whichever call opened it: the profile's storage put back in it. */
  seedPage(page: unknown): Promise<void>;
  /**
   * Before the context closes: the profile's state saved (with `persist`). `contextLeft`: the
   * context is left open for the runner's host to dispose after the run's answer, so the pages
   * need not be cleaned of the restore (no command is left under way as the answer goes).
   */
  beforeClose(contextLeft?: boolean): Promise<void>;
}

const NOTHING: SessionSetup = {
  active: false,
  opensFirstPage: false,
  attach: async () => undefined,
  seedPage: async () => undefined,
  beforeClose: async () => undefined,
};

/**
 * Checks the options and starts opening the profile (waiting for a writer's lease with
 * `persist`): the driver opens its context meanwhile, and `attach` waits for the state.
 * Nothing to do without a proxy or a profile.
 */
export function openSession(run: RunState, options: StateOptions): SessionSetup {
  checkProfileOption(options.profile, options.persist);
  const proxy: RunProxy | undefined = sessionProxy(options.proxy, run.proxy);
  if (!proxy && options.profile === undefined) return NOTHING;
  const persist = options.persist === true;
  const name = options.profile;
  let state: Promise<BrowserState> | undefined;
  if (name !== undefined) {
    if (!run.profiles) throw new Error("Profiles are not available to this run");
    state = fetchProfile(run.profiles, name, persist);
    // Awaited by attach; a refusal that comes before the context is open is not unhandled meanwhile.
    state.catch(() => undefined);
  }
  let opened: OpenProfile | undefined;
  // Pages opened at once wait for the first one's seeding: none shows a site before the storage is back.
  let seeding: Promise<unknown> = Promise.resolve();
  return {
    active: true,
    opensFirstPage: name !== undefined,
    ...(proxy ? { proxy } : {}),
    async attach(context) {
      if (state && name !== undefined && run.profiles) opened = await loadProfile(context, run.profiles, name, await state, persist);
    },
    seedPage(page) {
      const mine = seeding.then(() => opened?.seed(page));
      seeding = mine.catch(() => undefined);
      return mine;
    },
    async beforeClose(contextLeft) {
      const profile = opened;
      opened = undefined;
      if (profile) await profile.save(contextLeft);
    },
  };
}
