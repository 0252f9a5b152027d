/**
 * Proxies, black-box against the local service: a function's `proxy` setting sends its
 * browser's requests through a local authenticating proxy (password from the function's
 * secrets, never shown or kept); Session.start({ proxy }) overrides it; refused credentials and
 * an unreachable proxy fail naming the proxy's host; socks5 with a username is a 400.
 */
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { type AuthProxy, startAuthProxy } from "../helpers/authProxy";
import { type CapturingService, startCapturingService } from "../helpers/fuzzService";
import { scanTable } from "../helpers/fuzzStore";
import { type PageServer, startPageServer } from "../helpers/pageServer";
import { startTestService } from "../helpers/localService";

jest.setTimeout(180_000);

const PASSWORD = "pw-9f8e7d6c5b4a3928";
let t: CapturingService;
let pages: PageServer;
let proxy: AuthProxy;
beforeAll(async () => {
  [t, pages] = await Promise.all([startCapturingService(), startPageServer()]);
  proxy = await startAuthProxy("scraper", PASSWORD, pages.url);
});
afterAll(async () => {
  await proxy?.close();
  await pages?.close();
  await t?.destroy();
});

const TITLE_OF = `import { Session, secrets } from "browserfn/runtime";
export default async function run(url: string) {
  await using session = await Session.start();
  const page = await session.newPage();
  await page.goto(url);
  console.log("fetched through the proxy; its password is", secrets.get("PROXY_PASSWORD"));
  return { title: await page.title() };
}
`;

async function deploy(name: string, code: string, settings: Record<string, unknown>): Promise<void> {
  const created = await t.call("POST", "/functions", { body: { name, code, ...settings } });
  if (created.status !== 201) throw new Error(`deploy ${name}: ${created.status} ${created.text}`);
}

/** A port on 127.0.0.1 that nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

it("sends every request of the function's sessions through its authenticating proxy, with the password read from its secrets and shown nowhere", async () => {
  const setting = { server: proxy.server, username: "scraper", password_secret: "PROXY_PASSWORD", bypass: ["<-loopback>"] };
  await deploy("via-proxy", TITLE_OF, { proxy: setting });
  expect((await t.call("PUT", "/functions/via-proxy/secrets/PROXY_PASSWORD", { body: { value: PASSWORD } })).status).toBe(204);

  // shop.test exists only through the proxy (it serves every host from the page server).
  const answer = await t.call("POST", "/functions/via-proxy", { body: { url: "http://shop.test/title/through-the-proxy" } });
  expect(answer.status).toBe(200);
  expect(answer.body).toEqual({ title: "through-the-proxy" });
  expect(proxy.seen).toContain("GET http://shop.test/title/through-the-proxy");

  const info = await t.call("GET", "/functions/via-proxy/info");
  expect(info.body.proxy).toEqual({ server: proxy.server, username: "scraper", password_secret: "PROXY_PASSWORD", bypass: ["<-loopback>"] });
  const run = await t.call("GET", `/runs/${answer.headers.get("x-run-id")}`);
  const logs = await t.call("GET", "/functions/via-proxy/logs");
  expect(run.body.status).toBe("succeeded");
  const texts = [answer.text, info.text, run.text, logs.text, ...t.requestLog, ...t.errorLog, JSON.stringify(await scanTable(t.service))];
  expect(texts.filter((text) => text.includes(PASSWORD))).toEqual([]);
});

it("answers the proxy's challenge with the proxy's credentials and a site's own HTTP authentication with page.authenticate's (puppeteer)", async () => {
  await deploy(
    "site-auth",
    `import { Session } from "browserfn/runtime";
export default async function run(url: string, user: string | null) {
  await using session = await Session.start();
  const page = await session.newPage();
  if (user) await page.authenticate({ username: user, password: "site-pw" });
  const response = await page.goto(url);
  return { status: response?.status(), title: await page.title() };
}
`,
    { proxy: { server: proxy.server, username: "scraper", password_secret: "PROXY_PASSWORD", bypass: ["<-loopback>"] } },
  );
  expect((await t.call("PUT", "/functions/site-auth/secrets/PROXY_PASSWORD", { body: { value: PASSWORD } })).status).toBe(204);
  const url = "http://shop.test/basic-auth/alice:site-pw";
  expect((await t.call("POST", "/functions/site-auth", { body: { url, user: "alice" } })).body).toEqual({ status: 200, title: "authenticated" });
  // Without the site's credentials its own 401 stands (the proxy's are never offered to it); wrong ones are not retried forever.
  expect((await t.call("POST", "/functions/site-auth", { body: { url, user: null } })).body).toEqual({ status: 401, title: "who are you" });
  expect((await t.call("POST", "/functions/site-auth", { body: { url, user: "mallory" } })).body).toEqual({ status: 401, title: "who are you" });
  expect(proxy.seen).toContain(`GET ${url}`);
});

it("fails a navigation the proxy refuses the credentials for, naming the proxy and never the password", async () => {
  const setting = { server: proxy.server, username: "scraper", password_secret: "WRONG_PASSWORD", bypass: ["<-loopback>"] };
  await deploy("wrong-password", TITLE_OF, { proxy: setting });
  const wrong = `${PASSWORD}-not`;
  expect((await t.call("PUT", "/functions/wrong-password/secrets/WRONG_PASSWORD", { body: { value: wrong } })).status).toBe(204);
  const answer = await t.call("POST", "/functions/wrong-password", { body: { url: "http://shop.test/title/never" } });
  expect(answer.status).toBe(500);
  expect(answer.body.error.message).toContain(`The proxy ${proxy.host} refused the credentials`);
  expect(answer.text).not.toContain(wrong);
  expect(proxy.seen).not.toContain("GET http://shop.test/title/never");
  expect(answer.body.error.message).not.toContain("is not set");
  // A password_secret the function has no secret of: the refusal says so.
  expect((await t.call("DELETE", "/functions/wrong-password/secrets/WRONG_PASSWORD")).status).toBe(204);
  const unset = await t.call("POST", "/functions/wrong-password", { body: { url: "http://shop.test/title/never" } });
  expect(unset.body.error.message).toMatch(new RegExp(`^The proxy ${proxy.host} refused the credentials .*; the function's secret WRONG_PASSWORD, which its proxy's password_secret names, is not set`));
});

it("fails a navigation whose proxy cannot be reached, naming the proxy", async () => {
  const port = await closedPort();
  await deploy("no-proxy-there", TITLE_OF, { proxy: { server: `http://127.0.0.1:${port}`, bypass: ["<-loopback>"] } });
  const answer = await t.call("POST", "/functions/no-proxy-there", { body: { url: "http://shop.test/title/x" } });
  expect(answer.status).toBe(500);
  expect(answer.body.error.message).toContain(`The proxy 127.0.0.1:${port} could not be reached`);
});

it("lets Session.start({ proxy }) override the setting per session, and proxy: null go direct", async () => {
  const code = `import { Session, secrets } from "browserfn/runtime";
export default async function run(proxy_server: string, direct_url: string) {
  await using proxied = await Session.start({ proxy: { server: proxy_server, username: "scraper", password: secrets.get("PROXY_PASSWORD"), bypass: ["<-loopback>"] } });
  const one = await proxied.newPage();
  await one.goto("http://shop.test/title/per-session");
  await using direct = await Session.start({ proxy: null });
  const two = await direct.newPage();
  await two.goto(direct_url);
  return { proxied: await one.title(), direct: await two.title() };
}
`;
  const port = await closedPort();
  // The function's own proxy cannot be reached: only the overrides make these pages load.
  await deploy("override", code, { proxy: { server: `http://127.0.0.1:${port}` } });
  expect((await t.call("PUT", "/functions/override/secrets/PROXY_PASSWORD", { body: { value: PASSWORD } })).status).toBe(204);
  const answer = await t.call("POST", "/functions/override", { body: { proxy_server: proxy.server, direct_url: `${pages.url}/title/direct` } });
  expect(answer.status).toBe(200);
  expect(answer.body).toEqual({ proxied: "per-session", direct: "direct" });
  expect(proxy.seen).toContain("GET http://shop.test/title/per-session");
});

it("sends a Playwright session's requests through the function's authenticating proxy, names it when it refuses, and lets a session override it", async () => {
  const code = `import { Session, secrets } from "browserfn/runtime";
export default async function run(url: string, override: string) {
  await using session = await Session.start({ driver: "playwright", ...(override ? { proxy: { server: override, username: "scraper", password: secrets.get("PROXY_PASSWORD"), bypass: ["<-loopback>"] } } : {}) });
  const page = await session.newPage();
  await page.goto(url);
  console.log("through the proxy with", secrets.get("PROXY_PASSWORD"));
  return { title: await page.title() };
}
`;
  await deploy("pw-via-proxy", code, { proxy: { server: proxy.server, username: "scraper", password_secret: "PROXY_PASSWORD", bypass: ["<-loopback>"] } });
  expect((await t.call("PUT", "/functions/pw-via-proxy/secrets/PROXY_PASSWORD", { body: { value: PASSWORD } })).status).toBe(204);
  const answer = await t.call("POST", "/functions/pw-via-proxy", { body: { url: "http://shop.test/title/playwright-through-the-proxy", override: "" } });
  expect(answer.status).toBe(200);
  expect(answer.body).toEqual({ title: "playwright-through-the-proxy" });
  expect(proxy.seen).toContain("GET http://shop.test/title/playwright-through-the-proxy");

  // Wrong credentials: the navigation fails naming the proxy, never the password.
  await deploy("pw-wrong-password", code, { proxy: { server: proxy.server, username: "scraper", password_secret: "PROXY_PASSWORD", bypass: ["<-loopback>"] } });
  const wrong = `${PASSWORD}-wrong`;
  expect((await t.call("PUT", "/functions/pw-wrong-password/secrets/PROXY_PASSWORD", { body: { value: wrong } })).status).toBe(204);
  const refused = await t.call("POST", "/functions/pw-wrong-password", { body: { url: "http://shop.test/title/pw-never", override: "" } });
  expect(refused.status).toBe(500);
  expect(refused.body.error.message).toContain(`The proxy ${proxy.host} refused the credentials`);
  expect(proxy.seen).not.toContain("GET http://shop.test/title/pw-never");

  // Session.start({ proxy }) overrides an unreachable function proxy.
  const port = await closedPort();
  await deploy("pw-override", code, { proxy: { server: `http://127.0.0.1:${port}` } });
  expect((await t.call("PUT", "/functions/pw-override/secrets/PROXY_PASSWORD", { body: { value: PASSWORD } })).status).toBe(204);
  const overridden = await t.call("POST", "/functions/pw-override", { body: { url: "http://shop.test/title/pw-per-session", override: proxy.server } });
  expect(overridden.body).toEqual({ title: "pw-per-session" });
  expect(proxy.seen).toContain("GET http://shop.test/title/pw-per-session");

  const run = await t.call("GET", `/runs/${answer.headers.get("x-run-id")}`);
  const logs = await t.call("GET", "/functions/pw-via-proxy/logs");
  const texts = [answer.text, refused.text, overridden.text, run.text, logs.text, ...t.requestLog, ...t.errorLog, JSON.stringify(await scanTable(t.service))];
  expect(texts.filter((text) => text.includes(PASSWORD))).toEqual([]);
});

it("runs an unchanged Playwright script's launch({ proxy }) through that proxy, and its other launches through the function's", async () => {
  const code = `import { chromium } from "playwright";
import { secrets } from "browserfn/runtime";
export default async function run(proxy_server: string) {
  const browser = await chromium.launch({ headless: true, proxy: { server: proxy_server, username: "scraper", password: secrets.get("PROXY_PASSWORD"), bypass: "<-loopback>" } });
  const page = await browser.newPage();
  await page.goto("http://shop.test/title/launched-through-the-proxy");
  const own = await page.title();
  await browser.close();
  const plain = await chromium.launch();
  const context = await plain.newContext();
  const other = await context.newPage();
  await other.goto("http://shop.test/title/function-proxy");
  const fallback = await other.title();
  await plain.close();
  return { own, fallback };
}
`;
  await deploy("pw-script-proxy", code, { proxy: { server: proxy.server, username: "scraper", password_secret: "PROXY_PASSWORD", bypass: ["<-loopback>"] } });
  expect((await t.call("PUT", "/functions/pw-script-proxy/secrets/PROXY_PASSWORD", { body: { value: PASSWORD } })).status).toBe(204);
  const answer = await t.call("POST", "/functions/pw-script-proxy", { body: { proxy_server: proxy.server } });
  expect(answer.status).toBe(200);
  expect(answer.body).toEqual({ own: "launched-through-the-proxy", fallback: "function-proxy" });
  expect(proxy.seen).toEqual(expect.arrayContaining(["GET http://shop.test/title/launched-through-the-proxy", "GET http://shop.test/title/function-proxy"]));
});

it("names the function's proxy when it refuses or cannot be reached, in an unchanged Playwright script's own contexts and pages", async () => {
  const code = `import { chromium } from "playwright";
export default async function run(url: string, via_context: boolean) {
  const browser = await chromium.launch();
  const page = via_context ? await (await browser.newContext()).newPage() : await browser.newPage();
  const response = await page.goto(url);
  return { status: response?.status() };
}
`;
  await deploy("pw-script-refused", code, { proxy: { server: proxy.server, username: "scraper", password_secret: "PROXY_PASSWORD", bypass: ["<-loopback>"] } });
  const wrong = `${PASSWORD}-refused`;
  expect((await t.call("PUT", "/functions/pw-script-refused/secrets/PROXY_PASSWORD", { body: { value: wrong } })).status).toBe(204);
  for (const via_context of [true, false]) {
    const refused = await t.call("POST", "/functions/pw-script-refused", { body: { url: "http://shop.test/title/pw-script-never", via_context } });
    expect(refused.status).toBe(500);
    expect(refused.body.error.message).toContain(`The proxy ${proxy.host} refused the credentials`);
    expect(refused.text).not.toContain(wrong);
  }
  expect(proxy.seen).not.toContain("GET http://shop.test/title/pw-script-never");
  // A password_secret the function has no secret of: the refusal says so, as a session's does.
  expect((await t.call("DELETE", "/functions/pw-script-refused/secrets/PROXY_PASSWORD")).status).toBe(204);
  const unset = await t.call("POST", "/functions/pw-script-refused", { body: { url: "http://shop.test/title/pw-script-never", via_context: true } });
  expect(unset.body.error.message).toContain("the function's secret PROXY_PASSWORD, which its proxy's password_secret names, is not set");

  const port = await closedPort();
  await deploy("pw-script-unreachable", code, { proxy: { server: `http://127.0.0.1:${port}`, bypass: ["<-loopback>"] } });
  const unreachable = await t.call("POST", "/functions/pw-script-unreachable", { body: { url: "http://shop.test/title/x", via_context: false } });
  expect(unreachable.status).toBe(500);
  expect(unreachable.body.error.message).toContain(`The proxy 127.0.0.1:${port} could not be reached`);
});

it("refuses socks5 with a username (Chromium has no SOCKS authentication) and malformed servers, with 400s", async () => {
  const socks = await t.call("POST", "/functions", { body: { name: "socks", code: TITLE_OF, proxy: { server: "socks5://127.0.0.1:1080", username: "u", password_secret: "P" } } });
  expect(socks.status).toBe(400);
  expect(socks.body.error.code).toBe("invalid_request");
  expect(socks.text).toContain("Chromium has no SOCKS authentication");
  for (const server of ["ftp://proxy:21", "http://proxy", "http://user:pw@proxy:8080", "http://proxy:8080/path"]) {
    const answer = await t.call("POST", "/functions", { body: { name: "bad-proxy", code: TITLE_OF, proxy: { server } } });
    expect(answer.status).toBe(400);
  }
  const socksAlone = await t.call("POST", "/functions", { body: { name: "socks-ok", code: TITLE_OF, proxy: { server: "socks5://127.0.0.1:1080" } } });
  expect(socksAlone.status).toBe(201);
  expect((await t.call("PATCH", "/functions/socks-ok", { body: { proxy: null } })).body.proxy).toBeNull();
});

it("cannot reach a proxy on the host's loopback from the namespaces sandbox unless the local network is allowed", async () => {
  const closed = await startTestService({ config: { sandbox: "namespaces", allowLocalNetwork: false } });
  try {
    const code = `import { Session } from "browserfn/runtime";
export default async function run(url: string) {
  await using session = await Session.start();
  const page = await session.newPage();
  await page.goto(url);
  return { title: await page.title() };
}
`;
    await closed.deploy("loopback-proxy", code, { proxy: { server: proxy.server } });
    const [seen, refused] = [proxy.seen.length, proxy.refused];
    const answer = await closed.call("POST", "/functions/loopback-proxy", { body: { url: "http://shop.test/title/blocked" } });
    expect(answer.status).toBe(500);
    expect(answer.body.error.message).toContain(`The proxy ${proxy.host} could not be reached`);
    // Nothing reached it: no request forwarded, none refused.
    expect([proxy.seen.length, proxy.refused]).toEqual([seen, refused]);
  } finally {
    await closed.destroy();
  }
});

it("shows another account neither a shared function's proxy nor its profiles, and a fork brings none", async () => {
  await deploy("shared-proxy", TITLE_OF, { shared: true, proxy: { server: proxy.server, username: "scraper", password_secret: "PROXY_PASSWORD" }, profiles: ["shop"] });
  const id = (await t.call("GET", "/functions/shared-proxy/info")).body.function_id;
  const key = (await t.call("POST", "/api-keys", { body: { account: "proxy-other", plan: "free" } })).body.key;
  const seen = await t.call("GET", `/functions/${id}/info`, { token: key });
  expect(seen.status).toBe(200);
  expect(seen.body).toMatchObject({ proxy: null, profiles: [] });
  const fork = await t.call("POST", `/functions/${id}/fork`, { token: key, body: {} });
  expect(fork.status).toBe(201);
  expect(fork.body).toMatchObject({ proxy: null, profiles: [] });
});
