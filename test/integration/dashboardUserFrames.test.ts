import type { Browser, Page } from "puppeteer-core";
import { profileDirOf, signIn, watchedPage } from "../helpers/dashboardPage";
import { startTestService, type TestService } from "../helpers/localService";
import { expectNoProcessesWith } from "../helpers/processes";
import { runItem } from "../helpers/records";
import { launchTestBrowser } from "../helpers/testBrowser";

// The run page marks the frames of the user's own source: `automation.ts` for code deployed as
// one file, and the file names a CLI bundle's source map gives (`src/scrape.ts`).
const STACK = [
  "Error: no price",
  "    at Ke (src/scrape.ts:12:9)",
  "    at run (automation.ts:4:3)",
  "    at Session.start (browserfn-runtime)",
  "    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)",
  "    at async file:///var/task/runner.js:1:2",
].join("\n");

let t: TestService;
let browser: Browser;
let profileDir: string;
let page: Page;
const problems: string[] = [];

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestService(), launchTestBrowser()]);
  profileDir = profileDirOf(browser);
  const fn = await t.deploy("frames", "export default async () => 1;");
  const stored = await t.service.deps.store.functions.getById(fn.function_id);
  if (!stored) throw new Error("the function was not stored");
  await t.service.deps.store.runs.put(
    runItem(stored, { run_id: "run_01m8dz5470n3cyxybt8c8dszqa", status: "failed", error: { code: "function_error", message: "no price", stack: STACK }, finished_at: "2026-01-01T00:00:01.000Z" }),
  );
  page = await watchedPage(browser, problems);
  await signIn(page, t.url, t.adminKey);
}, 60_000);

afterAll(async () => {
  await page?.close();
  await browser?.close();
  if (profileDir) await expectNoProcessesWith(profileDir);
  await t?.destroy();
});

it("marks frames in the user's files, bundled ones too, and none of the runtime's or Node's", async () => {
  await page.goto(`${t.url}/#/runs/run_01m8dz5470n3cyxybt8c8dszqa`);
  await page.reload({ waitUntil: "networkidle0" });
  await page.waitForSelector("#run-stack", { timeout: 10_000 }).catch(async (error: Error) => {
    throw new Error(`${error.message}; the page shows: ${await page.$eval("main", (main) => main.textContent)}; problems: ${problems.join(" | ")}`);
  });
  expect(await page.$$eval("#run-stack mark.user-frame", (marks) => marks.map((mark) => mark.textContent))).toEqual(["src/scrape.ts:12:9", "automation.ts:4:3"]);
  expect(await page.$$eval("#run-stack .frame-user", (lines) => lines.map((line) => line.textContent?.trim()))).toEqual(["at Ke (src/scrape.ts:12:9)", "at run (automation.ts:4:3)"]);
  expect(problems).toEqual([]);
});
