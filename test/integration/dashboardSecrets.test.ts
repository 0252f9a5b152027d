import { createHash } from "node:crypto";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { Browser, Page } from "puppeteer-core";
import { profileDirOf, signIn, watchedPage } from "../helpers/dashboardPage";
import { startTestService, type TestService } from "../helpers/localService";
import { expectNoProcessesWith } from "../helpers/processes";
import { launchTestBrowser } from "../helpers/testBrowser";

const ARTIFACTS = path.join(__dirname, "..", "..", "test-artifacts", "dashboard");
const VALUE = "dash-Pa$$w0rd-<b>ünï</b>";
// The code holds the value's hash, not the value (the page shows the code).
const READS_SECRET = `import { createHash } from "node:crypto";
import { secrets } from "browserfn/runtime";
export default async function run() {
  const value = secrets.get("API_TOKEN");
  return { matches: value !== undefined && createHash("sha256").update(value).digest("hex") === "${createHash("sha256").update(VALUE).digest("hex")}", set: value !== undefined };
}`;

let t: TestService;
let browser: Browser;
let profileDir: string;

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestService(), launchTestBrowser(), mkdir(ARTIFACTS, { recursive: true })]);
  profileDir = profileDirOf(browser);
  expect(profileDir).not.toBe("");
  await t.deploy("reader", READS_SECRET);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  if (profileDir) await expectNoProcessesWith(profileDir);
  await t?.destroy();
});

describe("the dashboard's secrets of a function", () => {
  let page: Page;
  const problems: string[] = [];
  const requested: string[] = [];

  beforeAll(async () => {
    page = await watchedPage(browser, problems, requested);
    await signIn(page, t.url, t.adminKey);
  });
  afterAll(() => page?.close());

  const textOf = (selector: string) => page.$eval(selector, (element) => element.textContent ?? "");
  const names = () => page.$$eval("#secrets .secret-name", (codes) => codes.map((code) => code.textContent));
  const invoke = async () => (await t.call("POST", "/functions/reader", { body: {} })).body;
  /** Everything the page holds: its markup, its text, and the value of every field. */
  const pageHolds = () =>
    page.evaluate(() => [document.documentElement.outerHTML, document.body.innerText, ...[...document.querySelectorAll("input")].map((input) => input.value)].join("\n"));

  it("adds a secret through the form: its name is listed, its value is nowhere in the page, and the function's runs read it", async () => {
    await page.goto(`${t.url}/#/functions/reader`);
    await page.waitForSelector("#secret-form");
    expect(await textOf("#secrets")).toBe("No secrets.");
    expect(await page.$eval("#secret-value", (input) => (input as HTMLInputElement).type)).toBe("password");

    await page.type("#secret-name", "API_TOKEN");
    await page.type("#secret-value", VALUE);
    await page.click("#secret-save");
    await page.waitForSelector('#secrets tr[data-name="API_TOKEN"]');
    expect(await names()).toEqual(["API_TOKEN"]);
    expect(await textOf("#secret-status")).toBe("Saved API_TOKEN.");
    const listed = (await t.call("GET", "/functions/reader/secrets")).body.items;
    expect(await page.$eval('#secrets tr[data-name="API_TOKEN"] time', (time) => time.getAttribute("datetime"))).toBe(listed[0].updated_at);
    expect(await page.$eval("#secret-value", (input) => (input as HTMLInputElement).value)).toBe("");
    expect(await pageHolds()).not.toContain(VALUE);
    expect(await invoke()).toEqual({ matches: true, set: true });
    await page.screenshot({ path: path.join(ARTIFACTS, "secrets-1-added.png"), fullPage: true });

    // Shown again from the API, after a reload: still the name alone.
    await page.reload();
    await page.waitForSelector('#secrets tr[data-name="API_TOKEN"]');
    expect(await pageHolds()).not.toContain(VALUE);
  });

  it("shows the API's error for a bad name, and keeps the form's value for a retry", async () => {
    await page.type("#secret-name", "lower");
    await page.type("#secret-value", "xxxx");
    await page.click("#secret-save");
    await page.waitForSelector("#secret-status .error");
    expect(await textOf("#secret-status .error-code")).toBe("400 invalid_name");
    expect(await names()).toEqual(["API_TOKEN"]);
    expect(await page.$eval("#secret-value", (input) => (input as HTMLInputElement).value)).toBe("xxxx");
    await page.$eval("#secret-name", (input) => ((input as HTMLInputElement).value = ""));
    await page.$eval("#secret-value", (input) => ((input as HTMLInputElement).value = ""));
  });

  it("removes a secret after confirming, and the function's runs no longer read it", async () => {
    // Dismissed: nothing is removed.
    page.once("dialog", (dialog) => void dialog.dismiss());
    await page.click('#secrets button.remove-secret[data-name="API_TOKEN"]');
    expect(await names()).toEqual(["API_TOKEN"]);

    const dialogs: string[] = [];
    page.once("dialog", (dialog) => {
      dialogs.push(dialog.message());
      void dialog.accept();
    });
    await page.click('#secrets button.remove-secret[data-name="API_TOKEN"]');
    await page.waitForFunction(() => document.querySelector("#secrets")?.textContent === "No secrets.");
    expect(dialogs).toEqual(["Remove the secret API_TOKEN of reader? Its runs will no longer read it."]);
    expect(await textOf("#secret-status")).toBe("Removed API_TOKEN.");
    expect((await t.call("GET", "/functions/reader/secrets")).body.items).toEqual([]);
    expect(await invoke()).toEqual({ matches: false, set: false });
  });

  it("fits 390 px, and made no request off the origin, no console error but the 400, no CSP violation", async () => {
    await page.setViewport({ width: 390, height: 844 });
    try {
      await page.goto(`${t.url}/#/functions/reader`);
      await page.waitForSelector("#secret-form");
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    } finally {
      await page.setViewport({ width: 1280, height: 900 });
    }
    expect(requested.filter((url) => !url.startsWith(`${t.url}/`))).toEqual([]);
    // The browser logs the bad name's 400 answer; nothing else.
    expect(problems.filter((problem) => !/Failed to load resource: the server responded with a status of 400/.test(problem))).toEqual([]);
  });
});
