import type { Browser, Page } from "puppeteer-core";
import { profileDirOf, signIn, watchedPage } from "../helpers/dashboardPage";
import { startTestService, type TestService } from "../helpers/localService";
import { expectNoProcessesWith } from "../helpers/processes";
import { launchTestBrowser } from "../helpers/testBrowser";

const TRAP = `import { Session } from "browserfn/runtime";
export default async function run() {
  await using session = await Session.start();
  const page = await session.newPage();
  return page.title();
}`;
const MESSAGE =
  "line 5: `return page.title()` returns a promise while `await using session` closes the session at the return: write `return await page.title()`";

let t: TestService;
let browser: Browser;
let profileDir: string;

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestService(), launchTestBrowser()]);
  profileDir = profileDirOf(browser);
  expect(profileDir).not.toBe("");
  await t.deploy("trap", TRAP);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  if (profileDir) await expectNoProcessesWith(profileDir);
  await t?.destroy();
});

describe("the dashboard's function page: the latest version's code warnings", () => {
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    page = await watchedPage(browser, problems);
    await signIn(page, t.url, t.adminKey);
  });
  afterAll(() => page?.close());

  /** Loads the function's page afresh (going to the same #/… again would keep the page as it was). */
  const open = async (name: string) => {
    await page.goto(`${t.url}/#/functions/${name}`);
    await page.reload({ waitUntil: "networkidle0" });
    await page.waitForSelector("#function-name");
    await page.waitForSelector("#code-meta:not(:empty)");
  };

  it("shows each warning's code, line and message, after a settings-only update too, and none once the code is fixed", async () => {
    await open("trap");
    expect(await page.$eval("#code-warnings strong", (strong) => strong.textContent)).toBe("Version 1 will probably fail when it runs:");
    const shown = () => page.$$eval("#code-warnings li.code-warning", (items) => items.map((item) => [item.getAttribute("data-line"), item.textContent]));
    expect(await shown()).toEqual([["5", `unawaited_return_in_session ${MESSAGE}`]]);

    // A change of settings alone leaves the code, and its warnings, as they were.
    expect((await t.call("PATCH", "/functions/trap", { body: { description: "settings only" } })).status).toBe(200);
    await open("trap");
    expect(await page.$eval("#function-description", (lead) => lead.textContent)).toBe("settings only");
    expect(await shown()).toEqual([["5", `unawaited_return_in_session ${MESSAGE}`]]);

    const fixed = TRAP.replace("return page.title()", "return await page.title()");
    expect((await t.call("PATCH", "/functions/trap", { body: { code: fixed } })).status).toBe(200);
    await open("trap");
    expect(await page.$eval("#code-meta", (meta) => meta.textContent)).toMatch(/^version 2 /);
    expect(await page.$("#code-warnings")).toBeNull();
    expect(problems).toEqual([]);
  }, 60_000);
});
