import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser, Page } from "puppeteer-core";
import { startTestService, type TestService } from "../helpers/localService";
import { expectNoProcessesWith } from "../helpers/processes";
import { launchTestBrowser } from "../helpers/testBrowser";
import { profileDirOf, readBlobs, watchedPage } from "../helpers/dashboardPage";

// The run page's artifacts against the real local service: a run in a real sandboxed worker
// saves a screenshot (page.screenshot), a PDF (page.pdf), JSON, CSV, HTML, a zip and an image
// too large to preview; the page previews, downloads and revokes them.

/** Values that would run script if the page ever treated them as HTML. */
const HOSTILE = `<img src=x onerror="window.__injected=1">`;

/** A 1×1 PNG. */
const PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
const CSV = "name,count\nalpha,1\nbeta,2\n";
const JSON_TEXT = JSON.stringify({ a: 1, markup: HOSTILE });
const HTML = `<p>hello</p>${HOSTILE}`;
/** Over the page's 10 MB preview limit for images. */
const BIG_BYTES = 10 * 1024 * 1024 + 1;

/**
 * Saves what it made in a real browser and returns the SHA-256 of each artifact's bytes as it
 * saved them, and an image in a field (so that the page also holds a result image's object URL).
 */
const SAVES = `import { createHash } from "node:crypto";
import { artifacts, Session } from "browserfn/runtime";
export default async function run(text: string) {
  await using session = await Session.start();
  const page = await session.newPage();
  await page.setViewport({ width: 320, height: 200 });
  await page.setContent("<body style='background:#2a6'><h1>Report</h1><p>" + text + "</p></body>");
  const files: [string, Uint8Array | string, string][] = [
    ["shot.png", await page.screenshot({ type: "png" }), "image/png"],
    ["report.pdf", await page.pdf({ width: "320px", height: "200px" }), "application/pdf"],
    ["data.json", ${JSON.stringify(JSON_TEXT)}, "application/json"],
    ["table.csv", ${JSON.stringify(CSV)}, "text/csv"],
    ["page.html", ${JSON.stringify(HTML)}, "text/html"],
    ["trace.zip", new Uint8Array([0x50, 0x4b, 3, 4]), "application/zip"],
    ["big.png", new Uint8Array(${BIG_BYTES}), "image/png"],
  ];
  const sha256: Record<string, string> = {};
  for (const [name, data, contentType] of files) {
    await artifacts.save(name, data, { contentType });
    sha256[name] = createHash("sha256").update(data).digest("hex");
  }
  return { sha256, pixel: ${JSON.stringify(PNG_BASE64)} };
}
`;

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

let t: TestService;
let browser: Browser;
let profileDir: string;
let tmp: string;
let runId: string;
/** The SHA-256 of each artifact as the automation saved it. */
let saved: Record<string, string>;

beforeAll(async () => {
  [t, browser, tmp] = await Promise.all([startTestService(), launchTestBrowser(), mkdtemp(path.join(tmpdir(), "browserfn-artifact-previews-"))]);
  profileDir = profileDirOf(browser);
  expect(profileDir).not.toBe("");
  await t.deploy("saves", SAVES);
  const response = await t.call("POST", "/functions/saves", { body: { text: "hi" } });
  expect(response.status).toBe(200);
  runId = response.headers.get("x-run-id") ?? "";
  saved = response.body.sha256;
  expect(Object.keys(saved).sort()).toEqual(["big.png", "data.json", "page.html", "report.pdf", "shot.png", "table.csv", "trace.zip"]);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  if (profileDir) await expectNoProcessesWith(profileDir);
  await t?.destroy();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

/** An artifact's bytes as the API serves them. */
async function served(name: string): Promise<Buffer> {
  const response = await fetch(`${t.url}/runs/${runId}/artifacts/${name}`, { headers: { authorization: `Bearer ${t.adminKey}` } });
  expect(response.status).toBe(200);
  return Buffer.from(await response.arrayBuffer());
}

describe("the run page's artifacts, from the real local service", () => {
  let page: Page;
  const problems: string[] = [];
  const artifactRequests: { url: string; authorization: string | undefined }[] = [];

  beforeAll(async () => {
    page = await watchedPage(browser, problems);
    page.on("request", (request) => {
      const url = new URL(request.url());
      if (url.origin === t.url && url.pathname.startsWith(`/runs/${runId}/artifacts`)) artifactRequests.push({ url: url.pathname, authorization: request.headers().authorization });
    });
    await page.goto(`${t.url}/`);
    await page.evaluate((key) => sessionStorage.setItem("browserfn.api_key", key), t.adminKey);
  });
  afterAll(() => page?.close());

  it("fetches each artifact with the key and previews it: the screenshot decoded inline, the PDF in an object, JSON/CSV/HTML as text, others not", async () => {
    await page.goto(`${t.url}/#/runs/${runId}`);
    await page.reload(); // signed in with the key put in sessionStorage
    await page.waitForSelector("#run-artifacts li.artifact");
    await page.waitForFunction(() => ((document.querySelector('[data-name="shot.png"] img.artifact-image') as HTMLImageElement | null)?.naturalWidth ?? 0) > 0);
    await page.waitForSelector('[data-name="table.csv"] pre.artifact-text');
    await page.waitForSelector('[data-name="data.json"] pre.artifact-text');
    await page.waitForSelector('[data-name="page.html"] pre.artifact-text');
    await page.waitForSelector('[data-name="report.pdf"] object.artifact-pdf');

    const shot = await served("shot.png");
    expect(sha256(shot)).toBe(saved["shot.png"]);
    // The image the page shows is the screenshot, decoded: its size is the PNG's own (IHDR).
    const decoded = await page.$eval('[data-name="shot.png"] img.artifact-image', (img) => ({ width: (img as HTMLImageElement).naturalWidth, height: (img as HTMLImageElement).naturalHeight, src: img.getAttribute("src") ?? "" }));
    expect([decoded.width, decoded.height]).toEqual([shot.readUInt32BE(16), shot.readUInt32BE(20)]);
    expect(decoded.width).toBeGreaterThan(0);
    expect(decoded.src).toMatch(/^blob:/);

    const sizes = Object.fromEntries(await Promise.all(["shot.png", "report.pdf", "data.json", "table.csv", "page.html", "trace.zip"].map(async (name) => [name, (await served(name)).length] as const)));
    const heads = await page.$$eval("#run-artifacts li.artifact", (items) => items.map((item) => [item.getAttribute("data-name"), item.querySelector(".artifact-meta")?.textContent?.split(" · ").slice(0, 2)]));
    expect(heads).toEqual([
      ["big.png", ["image/png", "10.0 MB"]],
      ["data.json", ["application/json", `${sizes["data.json"]} B`]],
      ["page.html", ["text/html", `${sizes["page.html"]} B`]],
      ["report.pdf", ["application/pdf", expect.stringMatching(/^\d+(\.\d)? (B|KB)$/)]],
      ["shot.png", ["image/png", expect.stringMatching(/^\d+(\.\d)? (B|KB)$/)]],
      ["table.csv", ["text/csv", `${sizes["table.csv"]} B`]],
      ["trace.zip", ["application/zip", "4 B"]],
    ]);
    expect(await page.$eval('[data-name="table.csv"] pre.artifact-text', (pre) => pre.textContent)).toBe(CSV);
    expect(await page.$eval('[data-name="page.html"] pre.artifact-text', (pre) => pre.textContent)).toBe(HTML);
    expect(JSON.parse(await page.$eval('[data-name="data.json"] pre.artifact-text', (pre) => pre.textContent ?? ""))).toEqual({ a: 1, markup: HOSTILE });
    expect(await page.$eval('[data-name="data.json"] pre.artifact-text', (pre) => pre.textContent)).toContain('\n  "a": 1');
    expect(await page.$eval('[data-name="trace.zip"] .artifact-preview', (preview) => preview.textContent)).toBe("No preview for application/zip: download it.");
    expect(await page.$eval('[data-name="big.png"] .artifact-preview', (preview) => preview.textContent)).toBe("Too large to preview (10.0 MB): download it.");

    // The PDF preview: an <object> of a blob: URL typed application/pdf that holds the PDF page.pdf made.
    const pdf = await page.$eval('[data-name="report.pdf"] object.artifact-pdf', (object) => ({ data: object.getAttribute("data") ?? "", type: object.getAttribute("type") }));
    expect(pdf.type).toBe("application/pdf");
    expect(pdf.data).toMatch(/^blob:/);
    const pdfBytes = await served("report.pdf");
    expect(pdfBytes.subarray(0, 5).toString()).toBe("%PDF-");
    expect(sha256(pdfBytes)).toBe(saved["report.pdf"]);
    expect(await readBlobs(browser, t.url, [pdf.data])).toEqual([{ type: "application/pdf", base64: pdfBytes.toString("base64") }]);

    // Each previewed artifact was fetched once, with the key; the zip and the big image not at all.
    const fetched = artifactRequests.filter((request) => request.url !== `/runs/${runId}/artifacts`).map((request) => request.url.split("/").pop()).sort();
    expect(fetched).toEqual(["data.json", "page.html", "report.pdf", "shot.png", "table.csv"]);
    expect(new Set(artifactRequests.map((request) => request.authorization))).toEqual(new Set([`Bearer ${t.adminKey}`]));
    expect(await page.evaluate(() => (window as unknown as { __injected?: number }).__injected)).toBeUndefined();
  });

  it("downloads each artifact's exact bytes under its name", async () => {
    const downloads = path.join(tmp, "downloads");
    const session = await page.createCDPSession();
    const names = ["shot.png", "report.pdf", "data.json", "table.csv", "trace.zip"];
    try {
      await session.send("Browser.setDownloadBehavior", { behavior: "allow", downloadPath: downloads });
      for (const name of names) {
        const expected = await served(name);
        await page.click(`[data-name="${name}"] button.artifact-download`);
        const file = path.join(downloads, name);
        // Chromium writes a .crdownload and renames it to the name once complete.
        await waitFor(async () => existsSync(file) && (await stat(file)).size === expected.length);
        const got = await readFile(file);
        expect([name, sha256(got)]).toEqual([name, saved[name]]);
        expect(got.equals(expected)).toBe(true);
      }
    } finally {
      await session.detach();
    }
  });

  it("revokes its object URLs when the page is left", async () => {
    const urls = await page.$$eval("#run-artifacts img, #run-artifacts object, #run-result-images img", (nodes) => nodes.map((node) => node.getAttribute("src") ?? node.getAttribute("data") ?? ""));
    expect(urls.length).toBeGreaterThanOrEqual(3);
    expect((await readBlobs(browser, t.url, urls)).map((blob) => blob !== null)).toEqual(urls.map(() => true));
    await page.click('nav a[href="#/functions"]');
    await page.waitForSelector("#functions a.function-link");
    expect(await readBlobs(browser, t.url, urls)).toEqual(urls.map(() => null));
    expect(problems).toEqual([]);
  });
});

/** Resolves once `check` holds; throws after 10 s. */
async function waitFor(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("waited 10 s in vain");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
