import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { Browser, Page } from "puppeteer-core";
import { DASHBOARD_CSP } from "../../lambdas/dashboard/dashboardAssets";
import { renderPage } from "../../lambdas/dashboard/renderPage";
import { expectError } from "../helpers/http";
import { startTestService, type TestService } from "../helpers/localService";
import { expectNoProcessesWith } from "../helpers/processes";
import { launchTestBrowser } from "../helpers/testBrowser";
import { profileDirOf, watchedPage } from "../helpers/dashboardPage";

const ARTIFACTS = path.join(__dirname, "..", "..", "test-artifacts", "dashboard");

/** Values from the API that would run script if the page ever treated them as HTML. */
const HOSTILE = `<img src=x onerror="window.__injected=1">`;

const greetCode = (marker: string) => `// ${marker}
export default async function run(name: string, times: number = 1, loud: boolean = false) {
  if (name === "boom") throw new Error(${JSON.stringify(`Boom ${HOSTILE}`)});
  const text = "<b>Hello</b> " + name;
  return { greeting: Array.from({ length: times }, () => (loud ? text.toUpperCase() : text)) };
}
`;

let t: TestService;
let browser: Browser;
let profileDir: string;

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestService(), launchTestBrowser(), mkdir(ARTIFACTS, { recursive: true })]);
  profileDir = profileDirOf(browser);
  expect(profileDir).not.toBe("");
  await t.deploy("greet", greetCode("first version"), {
    description: `Greets someone ${HOSTILE}`,
    schedule: "0 6 1 1 *",
    schedule_params: { name: "New Year" },
  });
  const update = await t.call("PATCH", "/functions/greet", { body: { code: greetCode("second version") } });
  expect(update.status).toBe(200);
  const first = await t.call("POST", "/functions/greet", { body: { name: "API" } });
  expect(first.status).toBe(200);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  if (profileDir) await expectNoProcessesWith(profileDir);
  await t?.destroy();
});

describe("the dashboard's routes", () => {
  it("serve the page with a strict Content-Security-Policy, its files with ETags, and nothing else", async () => {
    const page = await fetch(`${t.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("content-security-policy")).toBe(DASHBOARD_CSP);
    expect(DASHBOARD_CSP).toContain("default-src 'none'");
    expect(DASHBOARD_CSP).not.toMatch(/unsafe|https?:|\*|data:/);
    // blob: URLs (made by the page itself, for artifacts and image results) for images and PDFs only.
    expect(DASHBOARD_CSP.split("; ").filter((directive) => directive.includes("blob:"))).toEqual(["img-src 'self' blob:", "object-src blob:"]);
    expect(page.headers.get("x-content-type-options")).toBe("nosniff");
    const html = await page.text();
    expect(html).toContain(`<script type="module" src="/dashboard/app.js"></script>`);
    expect(html).not.toMatch(/<script>|<style|style=|https?:\/\//);

    const script = await fetch(`${t.url}/dashboard/app.js`);
    expect([script.status, script.headers.get("content-type")]).toEqual([200, "text/javascript; charset=utf-8"]);
    const etag = script.headers.get("etag") ?? "";
    expect(etag).toMatch(/^".+"$/);
    expect((await script.text()).length).toBeGreaterThan(100);
    const again = await fetch(`${t.url}/dashboard/app.js`, { headers: { "if-none-match": etag } });
    expect([again.status, await again.text()]).toEqual([304, ""]);
    const css = await fetch(`${t.url}/dashboard/app.css`);
    expect([css.status, css.headers.get("content-type")]).toEqual([200, "text/css; charset=utf-8"]);

    expectError(await t.call("GET", "/dashboard/nope.js", { token: null }), 404, "route_not_found");
    expectError(await t.call("GET", "/dashboard/..%2FdashboardFiles.ts", { token: null }), 404, "route_not_found");
    expectError(await t.call("GET", "/dashboard/index.html", { token: null }), 404, "route_not_found");
    expectError(await t.call("POST", "/", { token: null }), 405, "method_not_allowed");
    const openapi = await t.call("GET", "/openapi.json", { token: null });
    expect(Object.keys(openapi.body.paths)).not.toContain("/");
  });

  it("link the files under the API's base path, escaped (a named API Gateway stage, a public URL)", () => {
    const template = `<link href="{{base}}/dashboard/app.css"><meta content="{{base}}">`;
    expect(renderPage(template, "http://127.0.0.1:8787")).toBe(`<link href="/dashboard/app.css"><meta content="">`);
    expect(renderPage(template, "https://abc.execute-api.eu-west-1.amazonaws.com/v1")).toBe(`<link href="/v1/dashboard/app.css"><meta content="/v1">`);
    expect(renderPage(template, `https://example.test/a'b"c/`)).toBe(`<link href="/a&#39;b%22c/dashboard/app.css"><meta content="/a&#39;b%22c">`);
  });
});

describe("the dashboard in a browser", () => {
  let page: Page;
  const problems: string[] = [];
  const requested: string[] = [];

  beforeAll(async () => {
    page = await watchedPage(browser, problems, requested);
  });
  afterAll(() => page?.close());

  const shot = (name: string) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
  const textOf = (selector: string) => page.$eval(selector, (element) => element.textContent ?? "");
  const count = (selector: string) => page.$$eval(selector, (elements) => elements.length);
  const storage = () =>
    page.evaluate(() => ({ session: sessionStorage.getItem("browserfn.api_key"), local: localStorage.getItem("browserfn.api_key") }));

  it("signs in with a key, refusing a wrong one readably, and keeps it in this tab only", async () => {
    await page.goto(`${t.url}/`, { waitUntil: "networkidle0" });
    await page.waitForSelector("#sign-in");
    await page.type("#api-key", "bfn_this-key-does-not-exist-000000000000");
    await page.click("#sign-in button[type=submit]");
    await page.waitForSelector("#sign-in-error .error");
    expect(await textOf("#sign-in-error .error-code")).toBe("401 invalid_token");
    expect((await textOf("#sign-in-error .error-message")).length).toBeGreaterThan(0);
    expect(await storage()).toEqual({ session: null, local: null });
    await shot("1-wrong-key");

    await page.$eval("#api-key", (input) => ((input as HTMLInputElement).value = ""));
    await page.type("#api-key", t.adminKey);
    await page.click("#sign-in button[type=submit]");
    await page.waitForSelector("#functions a.function-link");
    expect(await page.$$eval("#functions a.function-link", (links) => links.map((link) => link.textContent))).toEqual(["greet"]);
    expect(await textOf("#account")).toBe("local · pro");
    expect(await storage()).toEqual({ session: t.adminKey, local: null });
    await shot("2-functions");
  });

  it("shows a function's record, schedule, code of each version, logs and metrics, all values as text", async () => {
    await page.click("#functions a.function-link");
    await page.waitForSelector("#logs tbody tr");
    const record = (await t.call("GET", "/functions/greet/info")).body;
    expect(await textOf("#function-name")).toContain("greet");
    expect(await textOf("#function-description")).toBe(`Greets someone ${HOSTILE}`);
    expect(await count("#function-description *")).toBe(0);
    expect(await page.$eval("main", (main) => main.textContent ?? "")).toContain(record.function_id);
    expect(await textOf("#schedule")).toContain("0 6 1 1 *");
    expect(await textOf("#schedule")).toContain("New Year");
    expect(await page.$eval("#schedule time", (time) => time.getAttribute("datetime"))).toBe(record.next_run_at);

    await page.waitForFunction(() => document.querySelector("#code")?.textContent?.includes("second version"));
    await page.click('button.version[data-version="1"]');
    await page.waitForFunction(() => document.querySelector("#code")?.textContent?.includes("first version"));
    expect(await textOf("#code")).toContain("<b>Hello</b>");

    expect(await count("#logs tbody tr")).toBe(1);
    expect(await page.$eval("#duration-chart", (chart) => chart.getAttribute("data-count"))).toBe("1");
    expect(await count("#duration-chart rect.bar")).toBe(1);
    expect(await textOf("#total-calls")).toBe("1");
    expect(await textOf("#success-rate")).toBe("100%");
    await shot("3-function");
  });

  it("invokes it from a form built from its parameters, shows the result and the new run in the logs and the chart", async () => {
    const labels = await page.$$eval("#invoke-form .params label code", (codes) => codes.map((code) => code.textContent));
    expect(labels).toEqual(["name", "times", "loud"]);
    expect(await page.$eval("#param-0", (input) => (input as HTMLInputElement).type)).toBe("text");
    expect(await page.$eval("#param-1", (input) => (input as HTMLInputElement).type)).toBe("number");
    expect(await page.$eval("#param-2", (input) => (input as HTMLInputElement).type)).toBe("checkbox");

    await page.type("#param-0", "<i>World</i>");
    await page.type("#param-1", "2");
    await page.click("#invoke-button");
    await page.waitForSelector("#invoke-result .result-body");
    const result = JSON.parse(await textOf("#invoke-result .result-body"));
    expect(result).toEqual({ greeting: ["<b>Hello</b> <i>World</i>", "<b>Hello</b> <i>World</i>"] });
    expect(await count("#invoke-result .result-body *")).toBe(0);
    const runId = await textOf("#invoke-result .run-id");
    expect(runId).toMatch(/^run_[0-9a-z]{26}$/);

    await page.waitForFunction(() => document.querySelectorAll("#logs tbody tr").length === 2);
    expect(await textOf("#logs tbody tr:first-child .run-id")).toBe(runId);
    // Each run id, in the logs and in the result, links to the run's page.
    expect(await page.$eval("#logs tbody tr:first-child a.run-link", (link) => link.getAttribute("href"))).toBe(`#/runs/${runId}`);
    expect(await page.$eval("#invoke-result a.run-link", (link) => link.getAttribute("href"))).toBe(`#/runs/${runId}`);
    expect(await page.$eval("#duration-chart", (chart) => chart.getAttribute("data-count"))).toBe("2");
    expect(await count("#duration-chart rect.bar")).toBe(2);
    expect(await textOf("#total-calls")).toBe("2");
    const run = (await t.call("GET", `/runs/${runId}`)).body;
    expect(run).toMatchObject({ status: "succeeded", params: { name: "<i>World</i>", times: 2 }, trigger: "http", version: "2" });
    await shot("4-invoked");
  });

  it("shows the API's errors readably: a missing required parameter, an automation that throws", async () => {
    await page.$eval("#param-0", (input) => ((input as HTMLInputElement).value = ""));
    await page.click("#invoke-button");
    await page.waitForSelector("#invoke-result .error");
    expect(await textOf("#invoke-result .error-code")).toBe("400 invalid_parameters");
    expect(await textOf("#invoke-result .error-details")).toContain("name");
    expect(await textOf("#invoke-result .error")).toMatch(/request id \S+/);

    await page.type("#param-0", "x");
    await page.$eval("#param-1", (input) => ((input as HTMLInputElement).value = ""));
    await page.select("#invoke-version", "1");
    await page.click("#param-2");
    await page.click("#invoke-button");
    await page.waitForFunction(() => document.querySelector("#invoke-result .result-body")?.textContent?.includes("HELLO"));
    expect(JSON.parse(await textOf("#invoke-result .result-body"))).toEqual({ greeting: ["<B>HELLO</B> X"] });
    expect(await textOf("#invoke-result")).toContain("version 1");
    await page.waitForFunction(() => document.querySelectorAll("#logs tbody tr").length === 3);

    await page.$eval("#param-0", (input) => ((input as HTMLInputElement).value = "boom"));
    await page.click("#invoke-button");
    await page.waitForSelector("#invoke-result .error");
    expect(await textOf("#invoke-result .error-code")).toBe("500 function_error");
    expect(await textOf("#invoke-result .error-message")).toContain(`Boom ${HOSTILE}`);
    expect(await textOf("#invoke-result .error-details")).toContain("run_");
    expect(await count("#invoke-result .error-message *")).toBe(0);
    await page.waitForFunction(() => document.querySelectorAll("#logs tbody tr").length === 4);
    expect(await textOf("#logs tbody tr:first-child")).toContain(`function_error: Boom ${HOSTILE}`);
    expect(await count("#duration-chart rect.bar-failed")).toBe(1);
    expect(await textOf("#success-rate")).toBe("75%");
    await shot("5-errors");
  });

  it("follows a run answered with 202 (Prefer: respond-async) until it ends", async () => {
    await page.$eval("#param-0", (input) => ((input as HTMLInputElement).value = "later"));
    await page.click("#invoke-async");
    await page.click("#invoke-button");
    await page.waitForFunction(() => document.querySelector("#invoke-result")?.textContent?.includes("followed after 202"));
    expect(JSON.parse(await textOf("#invoke-result .result-body"))).toEqual({ greeting: ["<B>HELLO</B> LATER"] });
    await page.waitForFunction(() => document.querySelectorAll("#logs tbody tr").length === 5);
    const runId = await textOf("#invoke-result .run-id");
    expect(await textOf("#logs tbody tr:first-child .run-id")).toBe(runId);
  });

  it("shows the month's usage with the invocations, then signs out and forgets the key", async () => {
    await page.click('nav a[href="#/usage"]');
    await page.waitForSelector("#usage-functions tbody tr");
    expect(await textOf("#usage-invocations")).toBe("5");
    const row = await page.$$eval("#usage-functions tbody tr:first-child td", (cells) => cells.map((cell) => cell.textContent));
    expect(row.slice(0, 2)).toEqual(["greet", "5"]);
    expect(await textOf("#usage")).toContain("Plan: pro");
    await shot("6-usage");

    await page.click("#sign-out");
    await page.waitForSelector("#sign-in");
    expect(await storage()).toEqual({ session: null, local: null });
    await page.reload({ waitUntil: "networkidle0" });
    await page.waitForSelector("#sign-in");
  });

  it("remembers a key on this browser when asked, shows that key's account only, and signs out once the key is revoked", async () => {
    const created = await t.call("POST", "/api-keys", { body: { account: "bob", plan: "free", name: "dashboard test" } });
    expect(created.status).toBe(201);
    const bobKey: string = created.body.key;
    await page.type("#api-key", bobKey);
    await page.click("#remember");
    await page.click("#sign-in button[type=submit]");
    await page.waitForFunction(() => document.querySelector("#account")?.textContent === "bob · free");
    await page.click('nav a[href="#/functions"]');
    await page.waitForFunction(() => document.querySelector("main")?.textContent?.includes("No functions yet"));
    expect(await storage()).toEqual({ session: null, local: bobKey });

    const other = await browser.newPage();
    try {
      await other.goto(`${t.url}/#/usage`);
      await other.waitForSelector("#usage-invocations");
      expect(await other.$eval("#usage-invocations", (element) => element.textContent)).toBe("0");
      expect(await other.$eval("#usage-functions", (element) => element.textContent)).toBe("No runs this month.");
    } finally {
      await other.close();
    }

    const revoked = await t.call("DELETE", `/api-keys/${created.body.key_id}`, { token: bobKey });
    expect(revoked.status).toBe(204);
    await page.click('nav a[href="#/usage"]');
    await page.waitForSelector("#sign-in-error .error");
    expect(await textOf("#sign-in-error .error-code")).toBe("401 invalid_token");
    expect(await storage()).toEqual({ session: null, local: null });
    await shot("7-revoked");
  });

  it("loaded nothing from anywhere else, ran no injected markup, and logged no error", async () => {
    expect(requested.length).toBeGreaterThan(5);
    // data: URLs are Chromium's own (the month input's calendar icon), never fetched.
    expect(requested.filter((url) => !url.startsWith(`${t.url}/`) && !url.startsWith("data:"))).toEqual([]);
    expect(requested.filter((url) => url.includes("bfn_"))).toEqual([]);
    expect(await page.evaluate(() => (window as unknown as { __injected?: number }).__injected)).toBeUndefined();
    // Chromium logs each failed request: the wrong key's 401, the missing parameter's 400, the throwing run's 500.
    const expected = /Failed to load resource: the server responded with a status of (401|400|500)/;
    expect(problems.filter((line) => !expected.test(line))).toEqual([]);
  });
});
