import type { Browser, Page } from "puppeteer-core";
import { startTestService, type TestService } from "../helpers/localService";
import { launchTestBrowser } from "../helpers/testBrowser";
import { signIn, watchedPage } from "../helpers/dashboardPage";

// The dashboard's Runs page (the account's runs across functions, filtered) and the run page's
// Cancel button, in a real browser against the real service.

const WAITS = `export default async function run(ms: number) { console.log("waiting " + ms); await new Promise((r) => setTimeout(r, ms)); return ms; }`;
const FAILS = `export default async function run() { throw new Error("nope"); }`;

let t: TestService;
let browser: Browser;
let page: Page;
const problems: string[] = [];

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestService(), launchTestBrowser()]);
  await t.deploy("waits", WAITS);
  await t.deploy("fails", FAILS);
  page = await watchedPage(browser, problems);
  await signIn(page, t.url, t.adminKey);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await t?.destroy();
});

const cells = (selector: string) => page.$$eval(selector, (rows) => rows.map((row) => [...row.querySelectorAll("td")].map((cell) => cell.textContent ?? "")));

describe("the dashboard", () => {
  it("lists the account's runs from the nav, filters them by status, and cancels a running run from its page", async () => {
    const done = String((await t.call("POST", "/functions/waits", { body: { ms: 1 } })).headers.get("x-run-id"));
    const failed = String((await t.call("POST", "/functions/fails")).headers.get("x-run-id"));

    await page.click('nav a[data-nav="runs"]');
    await page.waitForSelector("#runs-table");
    expect((await cells("#runs-table tbody tr")).map((row) => [row[0], row[1], row[2]])).toEqual([
      [failed, "fails", "failed"],
      [done, "waits", "succeeded"],
    ]);
    await page.select("#runs-status", "failed");
    await page.click("#runs-filters button[type=submit]");
    await page.waitForFunction(() => document.querySelectorAll("#runs-table tbody tr").length === 1);
    expect((await cells("#runs-table tbody tr"))[0]?.slice(0, 3)).toEqual([failed, "fails", "failed"]);

    const accepted = await t.call("POST", "/functions/waits", { body: { ms: 120_000 }, headers: { prefer: "respond-async" } });
    const runId = String(accepted.body.run_id);
    await page.goto(`${t.url}/#/runs/${runId}`);
    await page.waitForSelector("#run-cancel");
    await page.click("#run-cancel");
    // The page shows the run as it ended: canceled, without the button, with its log.
    await page.waitForFunction(() => document.querySelector("#run-status")?.textContent === "canceled" && !document.querySelector("#run-cancel"), { timeout: 30_000 });
    expect(await page.$eval("#run-log", (log) => log.textContent)).toContain("waiting 120000");
    expect((await t.call("GET", `/runs/${runId}`)).body).toMatchObject({ status: "canceled", error: { code: "run_canceled" } });
    expect(problems).toEqual([]);
  }, 90_000);
});
