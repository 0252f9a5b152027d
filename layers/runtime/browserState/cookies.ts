import type { StoredCookie } from "./browserState";

/** A CDP connection at the browser's level (puppeteer's CDPSession, Playwright's CDPSession): all this layer needs. */
export interface BrowserCdp {
  send(method: string, params?: object): Promise<unknown>;
}

interface CdpCookie {
  name: string;
  value: string;
  domain: string;
  path: string;
  expires: number;
  httpOnly: boolean;
  secure: boolean;
  session: boolean;
  sameSite?: "Strict" | "Lax" | "None";
}

/** Every cookie of the browser context `contextId`, httpOnly ones too (CDP Storage.getCookies). */
export async function readCookies(cdp: BrowserCdp, contextId: string | undefined): Promise<StoredCookie[]> {
  const answer = (await cdp.send("Storage.getCookies", contextId ? { browserContextId: contextId } : {})) as { cookies: CdpCookie[] };
  return answer.cookies.map((cookie) => {
    const kept: StoredCookie = { name: cookie.name, value: cookie.value, domain: cookie.domain, path: cookie.path, httpOnly: cookie.httpOnly, secure: cookie.secure };
    if (!cookie.session && cookie.expires > 0) kept.expires = cookie.expires;
    if (cookie.sameSite) kept.sameSite = cookie.sameSite;
    return kept;
  });
}

/** A cookie as the browser is given it back: a session cookie has no `expires`. */
export interface LiveCookie {
  name: string;
  value: string;
  domain: string;
  path: string;
  httpOnly: boolean;
  secure: boolean;
  expires?: number;
  sameSite?: "Strict" | "Lax" | "None";
}

/** The cookies of `cookies` not expired at `nowSeconds` (epoch seconds), field by field (both drivers write these). */
export function liveCookies(cookies: readonly StoredCookie[], nowSeconds: number): LiveCookie[] {
  return cookies
    .filter((cookie) => cookie.expires === undefined || cookie.expires > nowSeconds)
    .map((cookie) => {
      const live: LiveCookie = { name: cookie.name, value: cookie.value, domain: cookie.domain, path: cookie.path, httpOnly: cookie.httpOnly, secure: cookie.secure };
      if (cookie.expires !== undefined) live.expires = cookie.expires;
      if (cookie.sameSite) live.sameSite = cookie.sameSite;
      return live;
    });
}

/** Puts `cookies` into the browser context `contextId` (CDP Storage.setCookies); expired ones are left out. */
export async function writeCookies(cdp: BrowserCdp, contextId: string | undefined, cookies: readonly StoredCookie[]): Promise<void> {
  const live = liveCookies(cookies, Date.now() / 1000);
  if (live.length === 0) return;
  await cdp.send("Storage.setCookies", { cookies: live, ...(contextId ? { browserContextId: contextId } : {}) });
}
