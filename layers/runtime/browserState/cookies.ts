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

/** Puts `cookies` into the browser context `contextId` (CDP Storage.setCookies); expired ones are left out. */
export async function writeCookies(cdp: BrowserCdp, contextId: string | undefined, cookies: readonly StoredCookie[]): Promise<void> {
  const now = Date.now() / 1000;
  const live = cookies
    .filter((cookie) => cookie.expires === undefined || cookie.expires > now)
    .map((cookie) => ({
      name: cookie.name,
      value: cookie.value,
      domain: cookie.domain,
      path: cookie.path,
      httpOnly: cookie.httpOnly,
      secure: cookie.secure,
      ...(cookie.expires === undefined ? {} : { expires: cookie.expires }),
      ...(cookie.sameSite ? { sameSite: cookie.sameSite } : {}),
    }));
  if (live.length === 0) return;
  await cdp.send("Storage.setCookies", { cookies: live, ...(contextId ? { browserContextId: contextId } : {}) });
}
