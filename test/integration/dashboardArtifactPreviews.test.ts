import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser, HTTPRequest, Page } from "puppeteer-core";
import { startTestService, type TestService } from "../helpers/localService";
import { expectNoProcessesWith } from "../helpers/processes";
import { launchTestBrowser } from "../helpers/testBrowser";
import { profileDirOf, watchedPage } from "../helpers/dashboardPage";

/** Values that would run script if the page ever treated them as HTML. */
const HOSTILE = `<img src=x onerror="window.__injected=1">`;

/** A 1×1 PNG. */
const PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/** Returns an image in a field, so that the run page also holds a result image (an object URL). */
const ECHO = `export default async function run(text: string) {
  return { text, pixel: ${JSON.stringify(PNG_BASE64)} };
}
`;

let t: TestService;
let browser: Browser;
let profileDir: string;
let tmp: string;
let echoRun: string;

beforeAll(async () => {
  [t, browser, tmp] = await Promise.all([startTestService(), launchTestBrowser(), mkdtemp(path.join(tmpdir(), "browserfn-artifact-previews-"))]);
  profileDir = profileDirOf(browser);
  expect(profileDir).not.toBe("");
  await t.deploy("echo", ECHO);
  const response = await t.call("POST", "/functions/echo", { body: { text: "hi" } });
  expect(response.status).toBe(200);
  echoRun = response.headers.get("x-run-id") ?? "";
}, 60_000);

afterAll(async () => {
  await browser?.close();
  if (profileDir) await expectNoProcessesWith(profileDir);
  await t?.destroy();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

/**
 * The artifact routes' answers as the contract gives them (`GET /runs/{id}/artifacts` and
 * `/artifacts/{name}`), served by the browser itself for one real run: they check the
 * previews, downloads and object URLs whether or not the service has the routes yet.
 */
describe("the run page's artifacts, on the contract's answers", () => {
  let page: Page;
  const artifactRequests: { url: string; authorization: string | undefined }[] = [];
  const problems: string[] = [];
  const PDF = "%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n";
  const served: Record<string, { type: string; body: Buffer }> = {
    "shot.png": { type: "image/png", body: Buffer.from(PNG_BASE64, "base64") },
    "report.pdf": { type: "application/pdf", body: Buffer.from(PDF) },
    "page.html": { type: "text/html; charset=utf-8", body: Buffer.from(`<p>hello</p>${HOSTILE}`) },
    "data.json": { type: "application/json", body: Buffer.from(`{"a":1,"markup":${JSON.stringify(HOSTILE)}}`) },
    "trace.zip": { type: "application/zip", body: Buffer.from("PK\u0003\u0004") },
    "huge.png": { type: "image/png", body: Buffer.from(PNG_BASE64, "base64") },
  };

  beforeAll(async () => {
    page = await watchedPage(browser, problems);
    await page.setRequestInterception(true);
    page.on("request", (request: HTTPRequest) => {
      const url = new URL(request.url());
      const prefix = `/runs/${echoRun}/artifacts`;
      if (url.origin !== t.url || !url.pathname.startsWith(prefix)) return request.continue();
      artifactRequests.push({ url: url.pathname, authorization: request.headers().authorization });
      if (url.pathname === prefix) {
        const items = Object.entries(served).map(([name, { type, body }]) => ({
          name,
          content_type: type,
          bytes: name === "huge.png" ? 50 * 1024 * 1024 : body.length,
          created_at: "2026-01-02T03:04:05.000Z",
          url: `${t.url}${prefix}/${name}`,
        }));
        return request.respond({ status: 200, contentType: "application/json", body: JSON.stringify({ items }) });
      }
      const artifact = served[decodeURIComponent(url.pathname.slice(prefix.length + 1))];
      if (!artifact) return request.respond({ status: 404, contentType: "application/json", body: JSON.stringify({ error: { code: "artifact_not_found", message: "no", request_id: "r", details: {} } }) });
      return request.respond({ status: 200, contentType: artifact.type, body: artifact.body });
    });
    await page.goto(`${t.url}/`);
    await page.evaluate((key) => sessionStorage.setItem("browserfn.api_key", key), t.adminKey);
  });
  afterAll(() => page?.close());

  /**
   * What blob: URLs of the dashboard hold (null once revoked), read from a page of the same
   * origin without the dashboard's Content-Security-Policy (whose connect-src has no blob:).
   */
  async function readBlobs(urls: string[]) {
    const reader = await browser.newPage();
    try {
      await reader.goto(`${t.url}/health`);
      return await reader.evaluate(
        (all) => Promise.all(all.map((url) => fetch(url).then(async (response) => ({ type: response.headers.get("content-type"), text: await response.text() }), () => null))),
        urls,
      );
    } finally {
      await reader.close();
    }
  }

  it("fetches each artifact with the key and previews it: images inline, PDFs in an object, text/HTML/JSON as text, others not", async () => {
    await page.goto(`${t.url}/#/runs/${echoRun}`);
    await page.reload(); // signed in with the key put in sessionStorage
    await page.waitForSelector("#run-artifacts li.artifact");
    await page.waitForFunction(() => (document.querySelector('[data-name="shot.png"] img.artifact-image') as HTMLImageElement | null)?.naturalWidth === 1);
    await page.waitForSelector('[data-name="data.json"] pre.artifact-text');
    await page.waitForSelector('[data-name="page.html"] pre.artifact-text');
    await page.waitForSelector('[data-name="report.pdf"] object.artifact-pdf');

    const heads = await page.$$eval("#run-artifacts li.artifact", (items) => items.map((item) => [item.getAttribute("data-name"), item.querySelector(".artifact-meta")?.textContent?.split(" · ").slice(0, 2)]));
    expect(heads).toEqual([
      ["shot.png", ["image/png", `${served["shot.png"]!.body.length} B`]],
      ["report.pdf", ["application/pdf", `${PDF.length} B`]],
      ["page.html", ["text/html", `${served["page.html"]!.body.length} B`]],
      ["data.json", ["application/json", `${served["data.json"]!.body.length} B`]],
      ["trace.zip", ["application/zip", "4 B"]],
      ["huge.png", ["image/png", "50.0 MB"]],
    ]);
    expect(await page.$eval('[data-name="page.html"] pre.artifact-text', (pre) => pre.textContent)).toBe(`<p>hello</p>${HOSTILE}`);
    expect(JSON.parse(await page.$eval('[data-name="data.json"] pre.artifact-text', (pre) => pre.textContent ?? ""))).toEqual({ a: 1, markup: HOSTILE });
    expect(await page.$eval('[data-name="data.json"] pre.artifact-text', (pre) => pre.textContent)).toContain('\n  "a": 1');
    expect(await page.$$eval("#run-artifacts .artifact-preview p, #run-artifacts .artifact-preview img", (nodes) => nodes.filter((node) => node.matches("img:not(.artifact-image)")).length)).toBe(0);
    expect(await page.$eval('[data-name="trace.zip"] .artifact-preview', (preview) => preview.textContent)).toBe("No preview for application/zip: download it.");
    expect(await page.$eval('[data-name="huge.png"] .artifact-preview', (preview) => preview.textContent)).toBe("Too large to preview (50.0 MB): download it.");

    const pdf = await page.$eval('[data-name="report.pdf"] object.artifact-pdf', (object) => ({ data: object.getAttribute("data") ?? "", type: object.getAttribute("type") }));
    expect(pdf.type).toBe("application/pdf");
    expect(pdf.data).toMatch(/^blob:/);
    expect(await readBlobs([pdf.data])).toEqual([{ type: "application/pdf", text: PDF }]);

    // Each previewed artifact was fetched once, with the key; the zip and the huge image not at all.
    const fetched = artifactRequests.filter((request) => request.url !== `/runs/${echoRun}/artifacts`).map((request) => request.url.split("/").pop()).sort();
    expect(fetched).toEqual(["data.json", "page.html", "report.pdf", "shot.png"]);
    expect(new Set(artifactRequests.map((request) => request.authorization))).toEqual(new Set([`Bearer ${t.adminKey}`]));
    expect(await page.evaluate(() => (window as unknown as { __injected?: number }).__injected)).toBeUndefined();
  });

  it("downloads an artifact's bytes under its name", async () => {
    const downloads = path.join(tmp, "downloads");
    const session = await page.createCDPSession();
    try {
      await session.send("Browser.setDownloadBehavior", { behavior: "allow", downloadPath: downloads });
      await page.click('[data-name="trace.zip"] button.artifact-download');
      const file = path.join(downloads, "trace.zip");
      const deadline = Date.now() + 10_000;
      while (!existsSync(file) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await readFile(file)).toEqual(served["trace.zip"]!.body);
    } finally {
      await session.detach();
    }
  });

  it("revokes its object URLs when the page is left", async () => {
    const urls = await page.$$eval("#run-artifacts img, #run-artifacts object, #run-result-images img", (nodes) => nodes.map((node) => node.getAttribute("src") ?? node.getAttribute("data") ?? ""));
    expect(urls.length).toBeGreaterThanOrEqual(3);
    expect((await readBlobs(urls)).map((blob) => blob !== null)).toEqual(urls.map(() => true));
    await page.click('nav a[href="#/functions"]');
    await page.waitForSelector("#functions a.function-link");
    expect(await readBlobs(urls)).toEqual(urls.map(() => null));
    expect(problems).toEqual([]);
  });
});
