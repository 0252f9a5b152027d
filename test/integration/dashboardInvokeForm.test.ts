import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { Browser, Page } from "puppeteer-core";
import { profileDirOf, signIn, watchedPage } from "../helpers/dashboardPage";
import { startTestService, type TestService } from "../helpers/localService";
import { expectNoProcessesWith } from "../helpers/processes";
import { launchTestBrowser } from "../helpers/testBrowser";

const ARTIFACTS = path.join(__dirname, "..", "..", "test-artifacts", "dashboard");

const SEARCH_FN = `
/**
 * @param query what to search for
 * @param mode how thoroughly
 * @param tags labels to match
 */
export default async function run(
  query: string,
  mode: "fast" | "full" = "fast",
  tags: string[] = [],
  options?: {
    /** Pages to read. @integer */
    pages: number;
    headless?: boolean;
  },
  extra?: unknown,
) {
  return { query, mode, tags, options };
}
`;

let t: TestService;
let browser: Browser;
let profileDir: string;
let page: Page;
const problems: string[] = [];

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestService(), launchTestBrowser(), mkdir(ARTIFACTS, { recursive: true })]);
  profileDir = profileDirOf(browser);
  await t.deploy("search", SEARCH_FN);
  page = await watchedPage(browser, problems);
}, 60_000);

afterAll(async () => {
  await page?.close();
  await browser?.close();
  if (profileDir) await expectNoProcessesWith(profileDir);
  await t?.destroy();
});

const textOf = (selector: string) => page.$eval(selector, (element) => element.textContent ?? "");
const count = (selector: string) => page.$$eval(selector, (elements) => elements.length);

describe("the invoke form built from the input schema", () => {
  it("shows a select for an enum, a list for an array, nested fields for an object, and descriptions as hints", async () => {
    await signIn(page, t.url, t.adminKey);
    await page.click("#functions a.function-link");
    await page.waitForSelector("#invoke-form");

    expect(await page.$eval("#param-0", (input) => (input as HTMLInputElement).type)).toBe("text");
    expect(await page.$eval("#param-1", (select) => select.tagName)).toBe("SELECT");
    const options = await page.$$eval("#param-1 option", (list) => list.map((option) => [(option as HTMLOptionElement).value, option.textContent]));
    expect(options).toEqual([
      ["", '(default: "fast")'],
      ['"fast"', "fast"],
      ['"full"', "full"],
    ]);
    expect(await page.$eval("#param-2", (list) => list.getAttribute("data-kind"))).toBe("array");
    expect(await count("#param-2 .list-item")).toBe(0);
    expect(await page.$eval("#param-3", (fieldset) => fieldset.tagName)).toBe("FIELDSET");
    expect(await page.$eval("#param-3-0", (input) => [(input as HTMLInputElement).type, (input as HTMLInputElement).step])).toEqual(["number", "1"]);
    expect(await page.$eval("#param-3-1", (input) => (input as HTMLInputElement).type)).toBe("checkbox");
    expect(await page.$eval("#param-4", (area) => area.tagName)).toBe("TEXTAREA");
    const hints = await page.$$eval("#invoke-form .hint", (list) => list.map((hint) => hint.textContent));
    expect(hints).toEqual(expect.arrayContaining(["what to search for", "how thoroughly", "labels to match", "Pages to read."]));
    expect(hints.some((text) => text?.startsWith("Not fully checked: extra: of type `unknown`"))).toBe(true);
  });

  it("adds and removes list items, and invokes with the chosen enum value, the list and the nested object", async () => {
    await page.type("#param-0", "shoes");
    await page.select("#param-1", '"full"');
    for (let i = 0; i < 3; i++) await page.click("#param-2-add");
    expect(await count("#param-2 .list-item")).toBe(3);
    await page.type("#param-2-item-0", "red");
    await page.type("#param-2-item-1", "gone");
    await page.type("#param-2-item-2", "blue");
    await page.click("#param-2 .list-item:nth-child(2) .list-remove");
    expect(await count("#param-2 .list-item")).toBe(2);
    await page.type("#param-3-0", "3");
    await page.click("#param-3-1");
    await page.screenshot({ path: path.join(ARTIFACTS, "invoke-form-schema.png"), fullPage: true });

    await page.click("#invoke-button");
    await page.waitForSelector("#invoke-result .result-body");
    const result = JSON.parse(await textOf("#invoke-result .result-body"));
    expect(result).toEqual({ query: "shoes", mode: "full", tags: ["red", "blue"], options: { pages: 3, headless: true } });
    const runId = await textOf("#invoke-result .run-id");
    const run = (await t.call("GET", `/runs/${runId}`)).body;
    expect(run.params).toEqual({ query: "shoes", mode: "full", tags: ["red", "blue"], options: { pages: 3, headless: true } });
  });

  it("shows the API's check of the schema: an empty list item and a non-integer are named by their place", async () => {
    await page.click("#param-2-add");
    await page.$eval("#param-3-0", (input) => ((input as HTMLInputElement).value = "1.5"));
    await page.click("#invoke-button");
    await page.waitForSelector("#invoke-result .error");
    expect(await textOf("#invoke-result .error-code")).toBe("400 invalid_parameters");
    expect(await textOf("#invoke-result .error-message")).toContain("tags[2] must be string (got null)");
    expect(await textOf("#invoke-result .error-message")).toContain("options.pages must be integer (got number)");
  });

  it("logged no error but the 400 it was asked for", () => {
    const expected = /Failed to load resource: the server responded with a status of 400/;
    expect(problems.filter((line) => !expected.test(line))).toEqual([]);
  });
});
