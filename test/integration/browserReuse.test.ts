/**
 * Issue #27: a sandbox keeps its browser across runs only when the run left it clean, and
 * nothing a run leaves in it reaches the next run (issue #26, item 4). Each test is a run that
 * leaves something behind in the browser (through the runtime's own calls, which keep the
 * browser, or through calls that act beyond the run's contexts, which taint it), then a run of
 * the same function in the same sandbox that looks for it everywhere the browser shows: its
 * contexts, its targets (pages, service workers), the default context's cookies, and a fresh
 * page of its own (cookies, localStorage, service workers, the HTTP cache, permissions). With
 * the browser kept and not reset, every one of them finds what was left.
 */
import { createServer, type Server } from "node:http";
import { serveLocally, type PageServer } from "../helpers/pageServer";
import { startTestService, type TestService } from "../helpers/localService";
import { browserPids } from "../helpers/sandboxProbes";

/**
 * `leave` modes leave one thing behind (and return); `look` lists what the browser holds, then
 * opens a context and a page of its own and reads what a page sees; `plain` opens a page in a
 * session and returns.
 */
const LEAVER = `import { Session } from "browserfn/runtime";
export default async function run(mode: string, site: string) {
  const session = await Session.start();
  const first = await session.newPage();
  const browser = first.browser();
  const root = await browser.target().createCDPSession();
  // The browser's own target id: another browser process has another.
  const id = ((await root.send("Target.getTargetInfo")) as any).targetInfo.targetId;
  if (mode === "plain") {
    await first.setContent("<title>plain</title>");
    return { out: await first.title(), browser: id };
  }
  if (mode === "look") {
    const contexts = ((await root.send("Target.getBrowserContexts")) as any).browserContextIds;
    const own = (first as any).browserContext().id;
    const targets = ((await root.send("Target.getTargets")) as any).targetInfos
      .filter((t: any) => t.type !== "browser" && t.browserContextId !== own)
      .map((t: any) => t.type + " " + t.url);
    const defaultCookies = ((await root.send("Storage.getCookies", {} as any)) as any).cookies.map((c: any) => c.name);
    const foreignCookies: string[] = [];
    for (const id of contexts.filter((c: string) => c !== own)) {
      foreignCookies.push(...((await root.send("Storage.getCookies", { browserContextId: id } as any)) as any).cookies.map((c: any) => c.name));
    }
    const page = await session.newPage();
    await page.goto(site + "/cookies");
    const seen = await page.evaluate(async (site: string) => {
      const registrations = await navigator.serviceWorker.getRegistrations();
      const permission = (await navigator.permissions.query({ name: "geolocation" })).state;
      const cached = await (await fetch(site + "/cached")).text();
      return { title: document.title, storage: localStorage.getItem("leak"), workers: registrations.length, permission, cached, binding: typeof (window as any).leakedCdp };
    }, site);
    return { browser: id, foreign_contexts: contexts.filter((c: string) => c !== own).length, targets, defaultCookies, foreignCookies, ...seen };
  }
  // What is left is in a context of the run's own, made on the browser directly (the runtime does not close it).
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  await page.goto(site + "/page");
  if (mode === "state") {
    await page.goto(site + "/set-cookie/leak");
    await page.evaluate(async (site: string) => {
      localStorage.setItem("leak", "1");
      await navigator.serviceWorker.register("/sw.js");
      await navigator.serviceWorker.ready;
      await (await fetch(site + "/cached")).text();
      setInterval(() => void fetch(site + "/tick"), 50);
    }, site);
    await context.overridePermissions(site, ["geolocation"]);
    return { out: "left", browser: id };
  }
  if (mode === "default-cookie") {
    await root.send("Storage.setCookies", { cookies: [{ name: "leak", value: "1", domain: "127.0.0.1", path: "/" }] } as any);
    return { out: "left", browser: id };
  }
  if (mode === "default-page") {
    const other = await browser.newPage();
    await other.goto(site + "/set-cookie/leak");
    await other.evaluate((site: string) => void setInterval(() => void fetch(site + "/tick"), 50), site);
    return { out: "left", browser: id };
  }
  if (mode === "expose") {
    await root.send("Target.exposeDevToolsProtocol", { targetId: (page.target() as any)._targetId, bindingName: "leakedCdp" } as any);
    return { out: "left", browser: id };
  }
  if (mode === "downloads") {
    await root.send("Browser.setDownloadBehavior", { behavior: "allow", downloadPath: "/tmp", eventsEnabled: true } as any);
    return { out: "left", browser: id };
  }
  throw new Error("unknown mode " + mode);
}`;

/** A Playwright session's run. */
const PLAYWRIGHT_RUN = `import { Session } from "browserfn/runtime";
export default async function run(site: string) {
  await using session = await Session.start({ driver: "playwright" });
  const page = await session.newPage();
  await page.goto(site + "/page");
  return await page.title();
}`;

/** What the site counts: fetches of the cached response, and a left page's timer ticks. */
interface Site extends PageServer {
  hits: { cached: number; tick: number };
}

async function startSite(): Promise<Site> {
  const hits = { cached: 0, tick: 0 };
  const server: Server = createServer((request, response) => {
    const [, kind, arg = ""] = (request.url ?? "/").split("/");
    if (kind === "sw.js") return void response.writeHead(200, { "content-type": "text/javascript" }).end("self.addEventListener('fetch', () => {});");
    if (kind === "cached") {
      hits.cached += 1;
      return void response.writeHead(200, { "content-type": "text/plain", "cache-control": "public, max-age=3600", "access-control-allow-origin": "*" }).end(`fetch ${hits.cached}`);
    }
    if (kind === "tick") {
      hits.tick += 1;
      return void response.writeHead(204).end();
    }
    const headers: Record<string, string> = { "content-type": "text/html" };
    if (kind === "set-cookie") headers["set-cookie"] = `${arg}=1; Path=/; Max-Age=3600`;
    const title = kind === "cookies" ? `cookies:${request.headers.cookie ?? ""}` : kind;
    response.writeHead(200, headers).end(`<!doctype html><title>${title}</title><p>${title}</p>`);
  });
  return Object.assign(await serveLocally(server), { hits });
}

/** What `look` finds in a browser nothing was left in (its own context and page aside). */
const NOTHING = { foreign_contexts: 0, targets: [], defaultCookies: [], foreignCookies: [], title: "cookies:", storage: null, workers: 0, permission: "prompt", binding: "undefined" };

describe("a sandbox's browser kept across runs", () => {
  let t: TestService;
  let site: Site;
  const invoke = async (mode: string) => {
    const answer = await t.call("POST", "/functions/leaver", { body: { mode, site: site.url } });
    if (answer.status !== 200) throw new Error(`${mode}: ${answer.status} ${answer.text}`);
    return answer.body as { out?: string; browser: string } & Record<string, unknown>;
  };
  /**
   * The browser a plain run gets once the pool has settled on one warm worker (two plain runs in
   * a row on the same browser): after a test that killed a browser, or with other suites busy, a
   * run may still land on a standby worker with a browser of its own.
   */
  const settledBrowser = async (): Promise<{ browser: string }> => {
    let { browser } = await invoke("plain");
    for (let i = 0; i < 5; i++) {
      const next = (await invoke("plain")).browser;
      if (next === browser) break;
      browser = next;
    }
    return { browser };
  };
  /** The left page's timer (if any) ticks no more: its context is gone. */
  const noTicks = async () => {
    const ticks = site.hits.tick;
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(site.hits.tick).toBe(ticks);
  };
  const browsers = () => browserPids(t.service.runtimeDir);

  beforeAll(async () => {
    site = await startSite();
    // One worker's sandbox serves every run of the function; the browser reaches the site on this machine.
    t = await startTestService({ config: { allowLocalNetwork: true, workers: { perFunction: 1, total: 2, idleSeconds: 120 } } });
    await t.deploy("leaver", LEAVER, { timeout_seconds: 30, memory_mb: 1024 });
    await t.deploy("pw-runner", PLAYWRIGHT_RUN, { timeout_seconds: 30, memory_mb: 1024 });
  }, 120_000);
  afterAll(async () => {
    await t?.destroy();
    await site?.close();
  });

  it("serves run after run with the same browser when they leave it clean", async () => {
    const first = await invoke("plain");
    expect(first.out).toBe("plain");
    const pids = browsers();
    expect(pids).toHaveLength(1);
    expect(await invoke("plain")).toEqual(first);
    expect(await invoke("plain")).toEqual(first);
    expect(browsers()).toEqual(pids);
  }, 120_000);

  it("serves Playwright runs with the same browser too", async () => {
    const call = async () => {
      const answer = await t.call("POST", "/functions/pw-runner", { body: { site: site.url } });
      expect([answer.status, answer.body]).toEqual([200, "page"]);
    };
    // The other function's sandbox has a browser of its own: only this one's are counted.
    const others = new Set(browsers());
    const own = () => browsers().filter((pid) => !others.has(pid));
    await call();
    const first = own();
    expect(first).toHaveLength(1);
    await call();
    await call();
    expect(own()).toEqual(first);
  }, 120_000);

  it("leaves nothing of a run's contexts, pages, timers, cookies, storage, service workers, cache or permissions to the next run, and keeps the browser", async () => {
    const { browser } = await settledBrowser();
    expect(await invoke("state")).toEqual({ out: "left", browser });
    expect(site.hits.cached).toBe(1);
    // Kept (the run acted only on its own contexts), and nothing of the run is in it.
    expect(await invoke("look")).toEqual({ ...NOTHING, browser, cached: "fetch 2" });
    await noTicks();
  }, 120_000);

  it.each([
    ["a cookie of the default context", "default-cookie"],
    ["a page of the default context, with its timer and cookie", "default-page"],
    ["an exposeDevToolsProtocol binding", "expose"],
  ])("kills a browser tainted by %s: the next run gets another", async (_what, mode) => {
    const { browser } = await settledBrowser();
    expect(await invoke(mode)).toEqual({ out: "left", browser });
    const look = await invoke("look");
    expect(look.browser).not.toBe(browser);
    expect(look).toMatchObject(NOTHING);
    await noTicks();
  }, 120_000);

  it("sets a download behaviour of the default context back, and keeps the browser", async () => {
    const { browser } = await settledBrowser();
    expect(await invoke("downloads")).toEqual({ out: "left", browser });
    expect(await invoke("look")).toMatchObject({ ...NOTHING, browser });
  }, 120_000);
});
