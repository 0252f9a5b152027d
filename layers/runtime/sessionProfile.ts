import { type BrowserState, type StoredCookie, stateBytes, stateFromBytes } from "./browserState/browserState";
import { originsHoldData, readOrigins, writeOrigins } from "./browserState/originStorage";
import type { StateContext } from "./browserState/stateContext";
import type { ProfileChannel } from "./runContext";

/** A profile is at most this big (its state as JSON). */
export const MAX_PROFILE_BYTES = 50 * 1024 * 1024;
const PROFILE_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** A profile opened by a session. */
export interface OpenProfile {
  /**
   * Before the session's first page is handed out: puts each origin's saved storage back in it
   * (a page of a fresh context costs a renderer, so the first page is borrowed rather than one
   * more opened); nothing after the first.
   */
  seed(page: unknown): Promise<void>;
  /** With `persist`: reads the session's state and hands it to the service (kept if the run succeeds), unless it is what was opened. */
  save(): Promise<void>;
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
 * Loads `state` into the session's context, whichever driver opened it: its cookies at once,
 * each origin's storage into the session's first page (`seed`); with `persist`, follows the
 * origins the session's pages visit so that their storage is saved too.
 */
export async function loadProfile<P>(context: StateContext<P>, channel: ProfileChannel, name: string, state: BrowserState, persist: boolean): Promise<OpenProfile> {
  await context.writeCookies(state.cookies);
  let toSeed = originsHoldData(state.origins) ? state.origins : [];
  const seed = async (page: unknown) => {
    const origins = toSeed;
    toSeed = [];
    await writeOrigins(() => context.borrow(page as P), origins);
  };
  if (!persist) return { seed, save: async () => undefined };
  // What the profile held when opened, as a save would write it: a save that changes nothing is not sent.
  const opened = state.cookies.length > 0 || state.origins.length > 0 ? comparable(state) : undefined;
  const origins = new Set(state.origins.map((origin) => origin.origin));
  const stopFollowing = context.followOrigins((origin) => origins.add(origin));
  return {
    seed,
    async save() {
      stopFollowing();
      // Origins never seeded (no page was opened) keep their saved storage as it was.
      const unseeded = toSeed;
      const open = await context.openPages();
      const toRead = [...origins].filter((origin) => !unseeded.some((kept) => kept.origin === origin)).sort();
      // The cookies (one Storage.getCookies) are read while the pages' storage is.
      const [read, cookies] = await Promise.all([readOrigins(() => context.helperPage(), toRead, (origin) => open.get(origin)), context.readCookies()]);
      const saved: BrowserState = { cookies: cookies.sort(cookieOrder), origins: [...unseeded, ...read] };
      // Unchanged: the profile and its record stay as they are (no write, the lease only given back).
      if (opened?.equals(comparable(saved))) return;
      await channel.save(name, stateBytes(saved));
    },
  };
}
