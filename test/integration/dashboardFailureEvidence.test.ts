import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser, Page } from "puppeteer-core";
import { startTestService, type TestService } from "../helpers/localService";
import { startPageServer, type PageServer } from "../helpers/pageServer";
import { expectNoProcessesWith } from "../helpers/processes";
import { launchTestBrowser } from "../helpers/testBrowser";
import { profileDirOf, signIn, watchedPage } from "../helpers/dashboardPage";

// A failed run's evidence on its run page, in real Chromium against the real local service:
// the automation (in a real sandboxed worker, with a real browser) opens a test page and throws
// on line 7 of its source; the run keeps failure-1.png and failure-1.html.

/** Where the page's screenshot is kept to be looked at (git-ignored). */
const ARTIFACTS = path.join(__dirname, "..", "..", "test-artifacts", "dashboard");
const TITLE = "Checkout step 2";
/** The test page's background (the sandbox's browser may have no fonts, so text alone would not show). */
const BACKGROUND = "3366cc";
const BACKGROUND_RGB = [0x33, 0x66, 0xcc];
const MESSAGE = "the Pay button was not there";

/** Throws on line 7 of its own source, with a page open. */
const BREAKS = `import { Session } from "browserfn/runtime";

export default async function run(url: string) {
  await using session = await Session.start();
  const page = await session.newPage();
  await page.goto(url);
  throw new Error(${JSON.stringify(MESSAGE)} + " on " + (await page.title()));
}
`;

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

let t: TestService;
let pages: PageServer;
let browser: Browser;
let profileDir: string;
let tmp: string;
let runId: string;
let pageUrl: string;

beforeAll(async () => {
  [t, pages, browser, tmp] = await Promise.all([startTestService(), startPageServer(), launchTestBrowser(), mkdtemp(path.join(tmpdir(), "browserfn-failure-evidence-"))]);
  profileDir = profileDirOf(browser);
  expect(profileDir).not.toBe("");
  await t.deploy("breaks", BREAKS);
  pageUrl = `${pages.url}/title/${encodeURIComponent(TITLE)}?background=${BACKGROUND}`;
  const answer = await t.call("POST", "/functions/breaks", { body: { url: pageUrl } });
  expect([answer.status, answer.body.error.code]).toEqual([500, "function_error"]);
  runId = String(answer.body.error.details.run_id);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  if (profileDir) await expectNoProcessesWith(profileDir);
  await Promise.all([t?.destroy(), pages?.close()]);
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

async function served(name: string): Promise<Buffer> {
  const response = await fetch(`${t.url}/runs/${runId}/artifacts/${name}`, { headers: { authorization: `Bearer ${t.adminKey}` } });
  expect(response.status).toBe(200);
  return Buffer.from(await response.arrayBuffer());
}

describe("a failed run's page", () => {
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    page = await watchedPage(browser, problems);
    await signIn(page, t.url, t.adminKey);
    await page.goto(`${t.url}/#/runs/${runId}`);
    await page.waitForSelector("#run-error");
  });
  afterAll(() => page?.close());

  const textOf = (selector: string) => page.$eval(selector, (element) => element.textContent ?? "");

  it("shows the error's message and its stack mapped to the automation's own line", async () => {
    expect(await textOf("#run-title .badge")).toBe("failed");
    expect(await textOf("#run-error .error-code")).toBe("function_error");
    expect(await textOf("#run-error .error-message")).toBe(`${MESSAGE} on ${TITLE}`);
    const stack = await textOf("#run-stack");
    expect(stack.split("\n")[0]).toBe(`Error: ${MESSAGE} on ${TITLE}`);
    const marked = await page.$$eval("#run-stack mark.user-frame", (marks) => marks.map((mark) => mark.textContent));
    // The throw is on line 7 of BREAKS, column 9 (`throw` is indented by two).
    expect(marked[0]).toBe("automation.ts:7:9");
    expect(await page.$eval("#run-stack .frame-user", (line) => line.textContent?.trim())).toBe("at run (automation.ts:7:9)");
  });

  it("shows the page's URL from the log, the screenshot decoded, and the HTML as text with a download of its bytes", async () => {
    expect(await textOf("#run-log")).toContain(`[browserfn] page 1 was at ${pageUrl}: kept failure-1.png, failure-1.html`);
    expect(await page.$$eval("#run-artifacts li.artifact", (items) => items.map((item) => item.getAttribute("data-name")))).toEqual(["failure-1.html", "failure-1.png", "recording-1.json"]);

    await page.waitForFunction(() => ((document.querySelector('[data-name="failure-1.png"] img.artifact-image') as HTMLImageElement | null)?.naturalWidth ?? 0) > 0);
    const png = await served("failure-1.png");
    // It is the screenshot of the page the run had open: the page's background fills it.
    expect(await decodePng(browser, png)).toMatchObject({ centre: BACKGROUND_RGB });
    const shown = await page.$eval('[data-name="failure-1.png"] img.artifact-image', (img) => [(img as HTMLImageElement).naturalWidth, (img as HTMLImageElement).naturalHeight]);
    expect(shown).toEqual([png.readUInt32BE(16), png.readUInt32BE(20)]);

    await page.waitForSelector('[data-name="failure-1.html"] pre.artifact-text');
    const html = await served("failure-1.html");
    expect(html.toString()).toContain(`<title>${TITLE}</title>`);
    expect(await textOf('[data-name="failure-1.html"] pre.artifact-text')).toBe(html.toString());

    const downloads = path.join(tmp, "downloads");
    await mkdir(downloads, { recursive: true });
    const session = await page.createCDPSession();
    try {
      await session.send("Browser.setDownloadBehavior", { behavior: "allow", downloadPath: downloads });
      await page.click('[data-name="failure-1.html"] button.artifact-download');
      const file = path.join(downloads, "failure-1.html");
      const deadline = Date.now() + 10_000;
      while (!(existsSync(file) && (await stat(file)).size === html.length) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(sha256(await readFile(file))).toBe(sha256(html));
    } finally {
      await session.detach();
    }
  });

  it("screenshots as a PNG of the whole page, not blank", async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    const file = path.join(ARTIFACTS, "failed-run-evidence.png");
    await page.screenshot({ path: file, fullPage: true });
    const png = await readFile(file);
    expect(png.subarray(0, 8).toString("hex")).toBe("89504e470d0a1a0a");
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1280, height]);
    // A page of text, badges and a screenshot has many colours.
    expect((await decodePng(browser, png)).colours).toBeGreaterThan(20);
    expect(problems).toEqual([]);
  });
});

/** A PNG decoded in a blank page of `browser` (no CSP there): how many colours it has, and its centre pixel's RGB. */
async function decodePng(browser: Browser, png: Buffer): Promise<{ colours: number; centre: number[] }> {
  const blank = await browser.newPage();
  try {
    return await blank.evaluate(async (base64: string) => {
      const image = new Image();
      image.src = `data:image/png;base64,${base64}`;
      await image.decode();
      const canvas = document.createElement("canvas");
      [canvas.width, canvas.height] = [image.naturalWidth, image.naturalHeight];
      const context = canvas.getContext("2d")!;
      context.drawImage(image, 0, 0);
      const data = context.getImageData(0, 0, canvas.width, canvas.height).data;
      const seen = new Set<number>();
      for (let i = 0; i < data.length; i += 4) seen.add((data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!);
      const centre = (Math.floor(canvas.height / 2) * canvas.width + Math.floor(canvas.width / 2)) * 4;
      return { colours: seen.size, centre: [data[centre]!, data[centre + 1]!, data[centre + 2]!] };
    }, png.toString("base64"));
  } finally {
    await blank.close();
  }
}
