import { type BrowserState, type StoredCookie, stateBytes, stateFromBytes } from "./browserState/browserState";
import { lazyRestore } from "./browserState/lazyRestore";
import { type OriginRead, originsWithData, parseOriginRead, readOriginExpression, readOrigins } from "./browserState/originStorage";
import type { StateContext } from "./browserState/stateContext";
import type { ProfileChannel } from "./runContext";

/** A profile is at most this big (its state as JSON). */
export const MAX_PROFILE_BYTES = 50 * 1024 * 1024;
const PROFILE_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** A profile opened by a session. */
export interface OpenProfile {
  /**
   * Before each page of the session is handed out: arms it for the lazy restore (lazyRestore.ts),
   * while a saved origin has not had its first document yet.
   */
  seed(page: unknown): Promise<void>;
  /**
   * With `persist`: reads the session's state and hands it to the service (kept if the run
   * succeeds), unless it is what was opened. `contextLeft`: the context stays for the runner's
   * host to dispose, so the restore leaves its script, binding and sessions in the pages.
   */
  save(contextLeft?: boolean): Promise<void>;
}

/** Cookies in one order (by domain, path, name), whatever order the browser lists them in. */
function cookieOrder(a: StoredCookie, b: StoredCookie): number {
  const [x, y] = [`${a.domain}\n${a.path}\n${a.name}`, `${b.domain}\n${b.path}\n${b.name}`];
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * A state's bytes for telling whether a save changed it: a cookie without SameSite counted as
 * `Lax` (what Chromium applies to it, and all Playwright reports of it), so that a profile saved
 * by either driver reads back the same through the other.
 */
function comparable(state: BrowserState): Buffer {
  return stateBytes({ cookies: state.cookies.map((cookie) => ({ ...cookie, sameSite: cookie.sameSite ?? "Lax" })), origins: state.origins });
}

/** Checks Session.start's `profile`/`persist` options. */
export function checkProfileOption(profile: unknown, persist: unknown): void {
  if (profile === undefined) {
    if (persist) throw new Error("Session.start({ persist: true }) needs a profile: Session.start({ profile: \"name\", persist: true })");
    return;
  }
  if (typeof profile !== "string" || !PROFILE_NAME.test(profile)) {
    throw new Error(`A profile's name must match ^[a-z0-9][a-z0-9-]{0,62}$, got ${JSON.stringify(String(profile).slice(0, 80))}`);
  }
}

/** The state of profile `name`, opened through the service (which checks the name and, for `persist`, takes the writer's lease). */
export async function fetchProfile(channel: ProfileChannel, name: string, persist: boolean): Promise<BrowserState> {
  return stateFromBytes(await channel.open(name, persist));
}

/**
 * Loads `state` into the session's context, whichever driver opened it: its cookies at once;
 * each origin's storage into the first document of that origin a page of the session shows
 * (`seed` arms each page: see lazyRestore.ts), so no navigation of its own is spent on it; with
 * `persist`, follows the origins the session's pages visit so that their storage is saved too.
 */
export async function loadProfile<P, R>(context: StateContext<P, R>, channel: ProfileChannel, name: string, state: BrowserState, persist: boolean): Promise<OpenProfile> {
  await context.writeCookies(state.cookies);
  const withData = originsWithData(state.origins);
  const restore = withData.length > 0 ? lazyRestore(withData) : undefined;
  const seed = async (page: unknown) => {
    if (restore) await restore.arm(context.restorePage(page as R));
  };
  if (!persist) return { seed, save: async (contextLeft) => void (await restore?.finish(undefined, contextLeft)) };
  // What the profile held when opened, as a save would write it: a save that changes nothing is not sent.
  const opened = state.cookies.length > 0 || state.origins.length > 0 ? comparable(state) : undefined;
  const origins = new Set(state.origins.map((origin) => origin.origin));
  // Each saved origin's storage as opened: a page whose storage is still that says so instead of sending it.
  const asOpened = new Map(withData.map((origin) => [origin.origin, origin]));
  const stopFollowing = context.followOrigins((origin) => origins.add(origin));
  return {
    seed,
    async save(contextLeft) {
      stopFollowing();
      // A saved origin whose storage was not put back in this session (no document of it was
      // shown, or only in a page the session did not arm, such as a popup) keeps its saved state.
      // The cookies (one Storage.getCookies) are read while the restore finishes and the pages' storage is read.
      const readingCookies = context.readCookies();
      readingCookies.catch(() => undefined);
      // Each armed page's document is read where it is, behind the round trip that brings the restore's confirmations in.
      const readNow = (origin: string) => readOriginExpression(origin, asOpened);
      const [{ restored, read: readEarly }, open] = await Promise.all([restore ? restore.finish(readNow, contextLeft) : { restored: new Set<string>(), read: new Map<string, string>() }, context.openPages()]);
      const readAlready = new Map<string, OriginRead>();
      for (const [origin, text] of readEarly) {
        const found = parseOriginRead(text);
        if (found) readAlready.set(origin, found);
      }
      const kept = withData.filter((origin) => !restored.has(origin.origin));
      const toRead = [...origins].filter((origin) => !kept.some((saved) => saved.origin === origin)).sort();
      const [read, cookies] = await Promise.all([readOrigins(() => context.helperPage(), toRead, (origin) => open.get(origin), asOpened, readAlready), readingCookies]);
      const saved: BrowserState = { cookies: cookies.sort(cookieOrder), origins: [...kept, ...read].sort((a, b) => (a.origin < b.origin ? -1 : a.origin > b.origin ? 1 : 0)) };
      // Unchanged: the profile and its record stay as they are (no write, the lease only given back).
      if (opened?.equals(comparable(saved))) return;
      await channel.save(name, stateBytes(saved));
    },
  };
}
