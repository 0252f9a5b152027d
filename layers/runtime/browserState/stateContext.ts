import type { StoredCookie } from "./browserState";
import type { RestorePage } from "./lazyRestore";
import type { OriginPage } from "./originStorage";

/**
 * A session's browser context as the profile layer sees it, whichever driver opened it
 * (puppeteerOrigins.ts, playwrightOrigins.ts): its cookies, pages it may point at an origin
 * without touching the network, and the origins its pages show.
 */
export interface StateContext<P = unknown, R = P> {
  /** Puts cookies into the context (expired ones left out). */
  writeCookies(cookies: readonly StoredCookie[]): Promise<void>;
  /** Every cookie of the context, httpOnly ones too. */
  readCookies(): Promise<StoredCookie[]>;
  /** One of the session's own pages (or what the driver arms it from before it is made), for the profile's lazy restore (lazyRestore.ts). */
  restorePage(page: R): RestorePage;
  /** An OriginPage on a page of the context opened for it and closed after. */
  helperPage(): Promise<OriginPage>;
  /** An OriginPage reading each origin already shown by one of the context's pages (http and https), without navigating it. */
  openPages(): Promise<Map<string, OriginPage>>;
  /** Tells `seen` each origin (http and https) a page of the context shows from now on; the answer stops it. */
  followOrigins(seen: (origin: string) => void): () => void;
}

/** The origin of `url` when it is http or https. */
export function webOrigin(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.origin : undefined;
  } catch {
    return undefined; // about:blank and the like: no origin
  }
}
