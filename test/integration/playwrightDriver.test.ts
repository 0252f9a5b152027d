import { startTestService, type TestService } from "../helpers/localService";
import { startPageServer, type PageServer } from "../helpers/testBrowser";
import { isPng } from "../helpers/png";

// The Playwright driver and scripts as they are, end to end on the local service: real sandboxed
// workers, the bundled Chromium 153 driven by playwright-core 1.63 over the worker's one CDP pipe.

describe("Playwright driver and scripts as they are", () => {
  let t: TestService;
  let pages: PageServer;

  beforeAll(async () => {
    [t, pages] = await Promise.all([startTestService(), startPageServer()]);
  }, 60_000);

  afterAll(async () => {
    await t?.destroy();
    await pages?.close();
  });

  const artifactNames = async (runId: string) =>
    ((await t.call("GET", `/runs/${runId}/artifacts`)).body as { items: { name: string }[] }).items.map((item) => item.name).sort();

  it('Session.start({ driver: "playwright" }) gives Playwright\'s Page and BrowserContext on Chromium 153', async () => {
    await t.deploy(
      "pw-driver",
      `import { Session } from "browserfn/runtime";
      export default async function run(url: string) {
        await using session = await Session.start({ driver: "playwright", timeout_minutes: 1 });
        const page = await session.newPage();
        await page.goto(url);
        const second = await session.context.newPage();
        return {
          title: await page.title(),
          text: await page.locator("p").textContent(),
          version: session.context.browser()?.version(),
          pages: session.context.pages().length,
          same: second.context() === session.context,
        };
      }`,
    );
    const answer = await t.call("POST", "/functions/pw-driver", { body: { url: `${pages.base}/pw` } });
    expect(answer.body).toEqual(expect.anything());
    if (answer.status !== 200) throw new Error(answer.text);
    expect(answer.body).toEqual({ title: "Hello /pw", text: "no cookie", version: expect.stringMatching(/^153\./), pages: 2, same: true });
  }, 60_000);

  it("a failing Playwright run keeps its screenshot and HTML, names the user's line, and keeps artifacts and downloads", async () => {
    await t.deploy(
      "pw-fails",
      `import { Session, artifacts } from "browserfn/runtime";
      export default async function run(url: string) {
        const session = await Session.start({ driver: "playwright" });
        const page = await session.newPage();
        await page.goto(url);
        await artifacts.save("note.txt", "kept");
        await page.setContent('<a href="data:text/plain,hello" download="report.txt">get</a>');
        const download = page.waitForEvent("download");
        await page.click("a");
        await (await download).path();
        await page.screenshot({ path: "shots/own.png" });
        throw new Error("broke on purpose");
      }`,
    );
    const answer = await t.call("POST", "/functions/pw-fails", { body: { url: `${pages.base}/x` } });
    expect(answer.status).toBe(500);
    const error = (answer.body as { error: { code: string; message: string; details: { run_id: string; stack?: string } } }).error;
    expect(error.code).toBe("function_error");
    expect(error.message).toContain("broke on purpose");
    expect(error.details.stack).toMatch(/\n {4}at run \(automation\.ts:12:15\)/);
    const names = await artifactNames(error.details.run_id);
    expect(names).toEqual(["download-report.txt", "failure-1.html", "failure-1.png", "note.txt", "own.png", "recording-1.json"]);
    const png = await fetch(`${t.url}/runs/${error.details.run_id}/artifacts/failure-1.png`, { headers: { authorization: `Bearer ${t.adminKey}` } });
    expect(isPng(Buffer.from(await png.arrayBuffer()))).toBe(true);
  }, 60_000);

  it("a Playwright script as it is: chromium.launch() with launch options runs on the run's browser; close() ends only its launch", async () => {
    const deployed = await t.deploy(
      "pw-script",
      `import { chromium } from "playwright";
      export default async function scrape(url: string) {
        const browser = await chromium.launch({ headless: false, executablePath: "/usr/bin/chromium", args: ["--start-maximized"], devtools: true });
        const other = await chromium.launch();
        const context = await browser.newContext();
        const page = await context.newPage();
        await page.goto(url + "/set-cookie");
        await page.goto(url + "/again");
        const seen = await page.locator("p").textContent();
        const otherPage = await other.newPage();
        await otherPage.goto(url + "/other");
        const isolated = await otherPage.locator("p").textContent();
        await browser.close();
        const afterClose = await browser.newPage().then(() => "", (error: Error) => error.message);
        const stillOpen = await otherPage.title();
        let refused = "";
        try {
          await chromium.connectOverCDP("http://127.0.0.1:9222");
        } catch (error) {
          refused = (error as Error).message;
        }
        await other.close();
        return { seen, isolated, stillOpen, closed: browser.isConnected(), refused, afterClose };
      }`,
    );
    expect(deployed.warnings).toEqual(
      ["headless", "executablePath", "args", "devtools"].map((option) => ({ code: "ignored_launch_option", line: 3, message: expect.stringContaining(`\`${option}\` is ignored on browserfn`) })),
    );
    const answer = await t.call("POST", "/functions/pw-script", { body: { url: pages.base } });
    if (answer.status !== 200) throw new Error(answer.text);
    expect(answer.body).toEqual({
      seen: "token=secret",
      isolated: "no cookie",
      stillOpen: "Hello /other",
      closed: false,
      refused: expect.stringContaining("a run reaches only its own sandboxed browser"),
      afterClose: expect.stringMatching(/^browser\.newPage: /),
    });
  }, 60_000);

  it("a Playwright script as it is: launchPersistentContext(dir, { ...devices[…], … }) keeps every context option, ignores the dir", async () => {
    const deployed = await t.deploy(
      "pw-persistent",
      `import { chromium, devices } from "playwright";
      export default async function scrape(url: string) {
        const context = await chromium.launchPersistentContext("/home/me/.chrome-profile", { ...devices["Pixel 5"], headless: false, colorScheme: "dark", locale: "de-DE", javaScriptEnabled: true });
        const opened = context.pages().length;
        const page = context.pages()[0];
        await page.goto(url + "/device");
        const seen = await page.evaluate(() => ({
          ua: navigator.userAgent,
          width: screen.width,
          ratio: devicePixelRatio,
          touch: navigator.maxTouchPoints > 0,
          dark: matchMedia("(prefers-color-scheme: dark)").matches,
          language: navigator.language,
        }));
        await context.close();
        return { opened, ...seen };
      }`,
    );
    expect(deployed.warnings).toEqual(
      ["userDataDir", "headless"].map((option) => ({ code: "ignored_launch_option", line: 3, message: expect.stringContaining(`\`${option}\` is ignored on browserfn`) })),
    );
    const answer = await t.call("POST", "/functions/pw-persistent", { body: { url: pages.base } });
    if (answer.status !== 200) throw new Error(answer.text);
    expect(answer.body).toEqual({ opened: 1, ua: expect.stringContaining("Pixel 5"), width: 393, ratio: 2.75, touch: true, dark: true, language: "de-DE" });
  }, 60_000);

  it("a Puppeteer script as it is: puppeteer.launch() with launch options, each launch a fresh context, connect() refused", async () => {
    const deployed = await t.deploy(
      "pptr-script",
      `import puppeteer from "puppeteer";
      export default async function scrape(url: string) {
        const browser = await puppeteer.launch({ headless: false, executablePath: "/opt/chrome", args: ["--no-sandbox"], userDataDir: "/tmp/profile" });
        const page = await browser.newPage();
        await page.goto(url + "/set-cookie");
        await page.goto(url + "/again");
        const seen = await page.$eval("p", (p) => p.textContent);
        const second = await puppeteer.launch();
        const other = await second.newPage();
        await other.goto(url + "/other");
        const isolated = await other.$eval("p", (p) => p.textContent);
        const contexts = browser.browserContexts().length;
        await browser.close();
        const stillOpen = await other.title();
        await second.close();
        let refused = "";
        try {
          await puppeteer.connect({ browserWSEndpoint: "ws://127.0.0.1:9222/devtools/browser/x" });
        } catch (error) {
          refused = (error as Error).message;
        }
        return { seen, isolated, contexts, stillOpen, version: await page.browser().version(), refused };
      }`,
    );
    expect(deployed.warnings).toEqual(
      ["headless", "executablePath", "args", "userDataDir"].map((option) => ({ code: "ignored_launch_option", line: 3, message: expect.stringContaining(`\`${option}\` is ignored on browserfn`) })),
    );
    expect(deployed.variables).toEqual([expect.objectContaining({ name: "url", type: "string", required: true })]);
    expect(deployed.input_schema).toEqual(expect.objectContaining({ properties: { url: { type: "string" } }, required: ["url"] }));
    const answer = await t.call("POST", "/functions/pptr-script", { body: { url: pages.base } });
    if (answer.status !== 200) throw new Error(answer.text);
    expect(answer.body).toEqual({
      seen: "token=secret",
      isolated: "no cookie",
      contexts: 1,
      stillOpen: "Hello /other",
      version: expect.stringContaining("153."),
      refused: expect.stringMatching(/a run reaches only its own sandboxed browser\. Use puppeteer\.launch\(\)/),
    });
  }, 60_000);

  it("a Puppeteer script as it is: a launch starts with one blank page, and its pages get defaultViewport (800×600 unless set)", async () => {
    await t.deploy(
      "pptr-pages",
      `import puppeteer from "puppeteer";
      export default async function scrape(url: string) {
        const browser = await puppeteer.launch({ headless: "new" });
        const [page] = await browser.pages();
        const blank = page.url();
        await page.goto(url + "/first");
        const size = await page.evaluate(() => [innerWidth, innerHeight]);
        const pagesThen = (await browser.pages()).length;
        const sized = await puppeteer.launch({ defaultViewport: { width: 1024, height: 700 } });
        const other = await (await sized.createBrowserContext()).newPage();
        const otherSize = await other.evaluate(() => [innerWidth, innerHeight]);
        const unsized = await puppeteer.launch({ defaultViewport: null });
        const emulated = (await unsized.newPage()).viewport();
        // A page of its own first: the launch's blank page is still there, listed first.
        const later = await puppeteer.launch();
        const own = await later.newPage();
        const listed = await later.pages();
        const ownFirst = [listed.length, listed[0]?.url(), listed[1] === own, (await later.pages()).length];
        const before = browser.connected;
        await Promise.all([browser.close(), sized.close(), unsized.close(), later.close()]);
        return { blank, title: await page.title().catch(() => "closed"), size, pagesThen, otherSize, emulated, sizeSeen: page.viewport(), connected: [before, browser.connected], ownFirst };
      }`,
    );
    const answer = await t.call("POST", "/functions/pptr-pages", { body: { url: pages.base } });
    if (answer.status !== 200) throw new Error(answer.text);
    expect(answer.body).toEqual({
      blank: "about:blank",
      title: "closed",
      size: [800, 600],
      pagesThen: 1,
      otherSize: [1024, 700],
      emulated: null,
      sizeSeen: expect.objectContaining({ width: 800, height: 600 }),
      connected: [true, false],
      ownFirst: [2, "about:blank", true, 2],
    });
  }, 60_000);
});
