import type { Browser, BrowserContext, CDPSession, Page, Target } from "puppeteer-core";
import { type BrowserState, stateBytes, stateFromBytes } from "./browserState/browserState";
import { readCookies, writeCookies } from "./browserState/cookies";
import { originsHoldData, readOrigins, writeOrigins } from "./browserState/originStorage";
import { borrowedOriginPage, helperOriginPage, openOriginPage, pagesByOrigin } from "./browserState/puppeteerOrigins";
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
  seed(page: Page): Promise<void>;
  /** With `persist`: reads the session's state and hands it to the service (kept if the run succeeds). */
  save(): Promise<void>;
}

/** One browser-level CDP session per browser, for the Storage domain (made on first use). */
const storageSessions = new WeakMap<Browser, Promise<CDPSession>>();

function storageSession(browser: Browser): Promise<CDPSession> {
  let session = storageSessions.get(browser);
  if (!session) {
    session = browser.target().createCDPSession();
    storageSessions.set(browser, session);
    session.catch(() => storageSessions.delete(browser));
  }
  return session;
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
 * Loads `state` into `context`: its cookies at once (CDP Storage.setCookies), each origin's
 * storage into the session's first page (`seed`); with `persist`, follows the origins the
 * session's pages visit so that their storage is saved too.
 */
export async function loadProfile(
  browser: Browser,
  context: BrowserContext,
  channel: ProfileChannel,
  name: string,
  state: BrowserState,
  persist: boolean,
): Promise<OpenProfile | undefined> {
  const cdp = await storageSession(browser);
  await writeCookies(cdp, context.id, state.cookies);
  let toSeed = originsHoldData(state.origins) ? state.origins : [];
  const seed = async (page: Page) => {
    const origins = toSeed;
    toSeed = [];
    await writeOrigins(() => borrowedOriginPage(page), origins);
  };
  if (!persist) return { seed, save: async () => undefined };
  const origins = new Set(state.origins.map((origin) => origin.origin));
  const follow = (target: Target) => {
    if (target.type() !== "page") return;
    try {
      const url = new URL(target.url());
      if (url.protocol === "http:" || url.protocol === "https:") origins.add(url.origin);
    } catch {
      // about:blank and the like: no origin
    }
  };
  context.on("targetcreated", follow);
  context.on("targetchanged", follow);
  return {
    seed,
    async save() {
      context.off("targetcreated", follow);
      context.off("targetchanged", follow);
      // Origins never seeded (no page was opened) keep their saved storage as it was.
      const unseeded = toSeed;
      const open = await pagesByOrigin(context);
      const read = await readOrigins(
        () => helperOriginPage(context),
        [...origins].filter((origin) => !unseeded.some((kept) => kept.origin === origin)).sort(),
        (origin) => {
          const page = open.get(origin);
          return page ? openOriginPage(page) : undefined;
        },
      );
      const saved: BrowserState = {
        cookies: await readCookies(await storageSession(browser), context.id),
        origins: [...unseeded, ...read],
      };
      await channel.save(name, stateBytes(saved));
    },
  };
}
