import type { Page } from "puppeteer-core";

/** A proxy as a session uses it: the function's (its password read by the service from its secrets) or Session.start's own. */
export interface RunProxy {
  server: string;
  username?: string;
  password?: string;
  bypass: string[];
  /** The function's secret its `password_secret` names, when the function has no such secret (the password is then missing). */
  missingSecret?: string;
}

/** `Session.start({ proxy })`: a proxy for this session only (`null`: none, whatever the function's setting). */
export interface SessionProxyOption {
  /** `http://host:port`, `https://host:port` or `socks5://host:port`. */
  server: string;
  username?: string;
  /** Read it with `secrets.get(…)`: it is redacted from the run's output as every secret is. */
  password?: string;
  /** Hosts reached without the proxy (`*.example.com`, `localhost`, …). */
  bypass?: string[];
}

/** The proxy `option` asks for (checked as the service checks the function setting), or the function's when it gives none. */
export function sessionProxy(option: SessionProxyOption | null | undefined, functionProxy: RunProxy | undefined): RunProxy | undefined {
  if (option === null) return undefined;
  if (option === undefined) return functionProxy;
  if (typeof option !== "object" || typeof option.server !== "string") throw new Error("Session.start({ proxy }) takes { server, username?, password?, bypass? } or null");
  let url: URL;
  try {
    url = new URL(option.server);
  } catch {
    throw new Error(`proxy.server must be a URL such as http://proxy.example.com:8080, got ${JSON.stringify(option.server.slice(0, 100))}`);
  }
  if (!["http:", "https:", "socks5:"].includes(url.protocol) || !/^[a-z0-9]+:\/\/[^/?#]*:\d+\/?$/i.test(option.server) || url.username || url.password) {
    throw new Error("proxy.server must be http://host:port, https://host:port or socks5://host:port (credentials go in username and password)");
  }
  if (url.protocol === "socks5:" && (option.username || option.password)) {
    throw new Error("Chromium has no SOCKS authentication: a socks5 proxy takes no username or password (use an http:// or https:// proxy for one that needs them)");
  }
  const proxy: RunProxy = { server: `${url.protocol}//${url.hostname}:${url.port || (url.protocol === "https:" ? "443" : "80")}`, bypass: Array.isArray(option.bypass) ? option.bypass.map(String) : [] };
  if (typeof option.username === "string") proxy.username = option.username;
  if (typeof option.password === "string") proxy.password = option.password;
  return proxy;
}

/** The proxy's host and port, as errors name it (never its credentials). */
export function proxyHost(proxy: RunProxy): string {
  return new URL(proxy.server).host;
}

const UNREACHABLE = /net::(ERR_PROXY_CONNECTION_FAILED|ERR_TUNNEL_CONNECTION_FAILED|ERR_PROXY_AUTH_UNSUPPORTED|ERR_SOCKS_CONNECTION_FAILED|ERR_PROXY_CERTIFICATE_INVALID|ERR_MANDATORY_PROXY_CONFIGURATION_FAILED|ERR_NO_SUPPORTED_PROXIES)/;
const REFUSED = /net::(ERR_PROXY_AUTH_REQUESTED|ERR_INVALID_AUTH_CREDENTIALS|ERR_PROXY_AUTH_REQUESTED_WITH_NO_CONNECTION)/;

/** Why the proxy may have refused: its password's secret is not set (or nothing). */
function missingSecretNote(proxy: RunProxy): string {
  return proxy.missingSecret ? `; the function's secret ${proxy.missingSecret}, which its proxy's password_secret names, is not set (PUT /functions/{name}/secrets/${proxy.missingSecret})` : "";
}

/** A navigation's failure through `proxy`, said as the proxy's (naming its host, never its password). */
function proxyFailure(error: unknown, proxy: RunProxy): unknown {
  const message = error instanceof Error ? error.message : "";
  if (REFUSED.test(message)) return new Error(`The proxy ${proxyHost(proxy)} refused the credentials (${message.split(" at ")[0]})${missingSecretNote(proxy)}`);
  if (UNREACHABLE.test(message)) return new Error(`The proxy ${proxyHost(proxy)} could not be reached or refused the connection (${message.split(" at ")[0]})`);
  return error;
}

/** A page of either driver, as far as its proxy's errors go: its `goto` and the status of what it answers. */
interface GotoPage {
  goto(url: string, options?: never): Promise<{ status(): number } | null>;
}

/**
 * Makes a navigation of `page` that `proxy` refuses (407) or that cannot reach it fail with an
 * error naming the proxy's host (never its credentials). Both drivers' pages.
 */
export function nameProxyFailures(page: GotoPage, proxy: RunProxy): void {
  const goto = page.goto.bind(page);
  page.goto = async (url, options) => {
    let response;
    try {
      response = await goto(url, options);
    } catch (error) {
      throw proxyFailure(error, proxy);
    }
    if (response?.status() === 407) {
      throw new Error(`The proxy ${proxyHost(proxy)} refused the credentials (407 Proxy Authentication Required) for ${new URL(url).host}${missingSecretNote(proxy)}`);
    }
    return response;
  };
}

/** What Fetch.authRequired says of a challenge. */
interface AuthRequired {
  requestId: string;
  authChallenge: { source?: "Server" | "Proxy" };
}

/**
 * Sets a session's puppeteer page up for its proxy: its failures name the proxy
 * (nameProxyFailures), and, for a proxy with a username, a CDP session of the page's own
 * answers each challenge by where it comes from: the proxy's (407) with the proxy's credentials,
 * a site's own (401) with those the code gives `page.authenticate` (none: the 401 stands).
 * Puppeteer's own `authenticate` keeps one set of credentials for both, so the code's would
 * answer the proxy; that session is asked first (the page's newest), and its answer stands.
 */
export async function proxyPage(page: Page, proxy: RunProxy): Promise<void> {
  nameProxyFailures(page as unknown as GotoPage, proxy);
  if (proxy.username === undefined) return;
  const own = { username: proxy.username, password: proxy.password ?? "" };
  let site: { username: string; password: string } | null = null;
  // A challenge answered once for a request is cancelled the second time (wrong credentials would loop).
  const answered = new Set<string>();
  const cdp = await page.createCDPSession();
  cdp.on("Fetch.requestPaused", (event: { requestId: string }) => void cdp.send("Fetch.continueRequest", { requestId: event.requestId }).catch(() => undefined));
  cdp.on("Fetch.authRequired", (event: AuthRequired) => {
    const key = `${event.authChallenge.source ?? "Server"}:${event.requestId}`;
    const credentials = event.authChallenge.source === "Proxy" ? own : site;
    const response = answered.has(key)
      ? { response: "CancelAuth" as const }
      : credentials
        ? { response: "ProvideCredentials" as const, ...credentials }
        : { response: "Default" as const };
    if (credentials) answered.add(key);
    void cdp.send("Fetch.continueWithAuth", { requestId: event.requestId, authChallengeResponse: response }).catch(() => undefined);
  });
  await cdp.send("Fetch.enable", { handleAuthRequests: true, patterns: [{ urlPattern: "*" }] });
  // The code's credentials are the site's: kept here, never handed to the proxy.
  Object.defineProperty(page, "authenticate", {
    configurable: true,
    value: async function authenticate(credentials: { username: string; password: string } | null): Promise<void> {
      site = credentials ? { username: credentials.username, password: credentials.password } : null;
    },
  });
}

/** What puppeteer's `createBrowserContext` takes for `proxy`. */
export function puppeteerProxyOptions(proxy: RunProxy | undefined): { proxyServer?: string; proxyBypassList?: string[] } {
  return proxy ? { proxyServer: proxy.server, ...(proxy.bypass.length > 0 ? { proxyBypassList: proxy.bypass } : {}) } : {};
}

/** Bypass entries after which Playwright leaves a bypass list as it is (else it prepends `<-loopback>`: see playwrightProxy). */
const LOOPBACK_ENTRIES = ["localhost", "127.0.0.1", "::1", "[::]", "[::1]", "<loopback>", "<-loopback>"];

/**
 * What Playwright's `newContext({ proxy })` takes for `proxy`, with the same meaning as the
 * puppeteer driver's: Playwright alone sends loopback requests through the proxy unless the
 * bypass list names loopback, so a list that does not gets `localhost`, which Chromium bypasses
 * anyway (as it bypasses all of loopback unless told `<-loopback>`).
 */
export function playwrightProxy(proxy: RunProxy): { server: string; bypass?: string; username?: string; password?: string } {
  const bypass = proxy.bypass.some((entry) => LOOPBACK_ENTRIES.includes(entry.trim())) ? proxy.bypass : [...proxy.bypass, "localhost"];
  return {
    server: proxy.server,
    bypass: bypass.join(","),
    ...(proxy.username !== undefined ? { username: proxy.username, password: proxy.password ?? "" } : {}),
  };
}
