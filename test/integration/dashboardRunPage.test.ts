import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser, Page } from "puppeteer-core";
import { copyRun } from "../../lambdas/runs/copyRun";
import { startTestService, type TestService } from "../helpers/localService";
import { expectNoProcessesWith } from "../helpers/processes";
import { launchTestBrowser } from "../helpers/testBrowser";
import { profileDirOf, readBlobs, signIn, watchedPage } from "../helpers/dashboardPage";

/** Values that would run script if the page ever treated them as HTML. */
const HOSTILE = `<img src=x onerror="window.__injected=1">`;

/** A 1×1 PNG. */
const PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
const PNG_DATA_URL = `data:image/png;base64,${PNG_BASE64}`;

/** A small PDF (one empty page), whole. */
const PDF_TEXT = "%PDF-1.4\n1 0 obj <</Type /Catalog /Pages 2 0 R>> endobj\n2 0 obj <</Type /Pages /Kids [] /Count 0>> endobj\ntrailer <</Root 1 0 R>>\n%%EOF\n";
const PDF_BASE64 = Buffer.from(PDF_TEXT).toString("base64");
/** Returns a PDF twice: as a data URL and as bare base64. */
const PDF_RESULT = `export default async function run() {
  return { report: ${JSON.stringify(`data:application/pdf;base64,${PDF_BASE64}`)}, raw: ${JSON.stringify(PDF_BASE64)}, note: "not a pdf" };
}
`;

/** Throws from line 4 of its source, after logging indented lines and markup. */
const FAILS = `export default async function run(target_url: string, api_token: string = "") {
  console.log("  indented line\\n\\tand a tab " + ${JSON.stringify(HOSTILE)});
  const label = "Boom " + ${JSON.stringify(HOSTILE)};
  throw new Error(label);
}
`;
const PIXEL = `export default async function run() {
  return ${JSON.stringify(PNG_DATA_URL)};
}
`;
const ECHO = `export default async function run(text: string) {
  console.log(text);
  return { text, markup: ${JSON.stringify(HOSTILE)}, pixel: ${JSON.stringify(PNG_BASE64)}, long: "x".repeat(400) };
}
`;
/** Saves one artifact of each kind the run page previews. */
const SAVES = `import { artifacts } from "browserfn/runtime";
export default async function run() {
  await artifacts.save("pixel.png", Buffer.from(${JSON.stringify(PNG_BASE64)}, "base64"), { contentType: "image/png" });
  await artifacts.save("page.html", ${JSON.stringify(`<p>hi</p>${HOSTILE}`)}, { contentType: "text/html" });
  await artifacts.save("data.json", JSON.stringify({ a: 1, b: [2] }), { contentType: "application/json" });
  await artifacts.save("doc.pdf", "%PDF-1.4\\n%%EOF\\n", { contentType: "application/pdf" });
  return "saved";
}
`;

let t: TestService;
let browser: Browser;
let profileDir: string;
let tmp: string;
let failedRun: string;
let pixelRun: string;
let echoRun: string;

async function invoke(name: string, body?: unknown): Promise<string> {
  const response = await t.call("POST", `/functions/${name}`, { body });
  const runId = response.headers.get("x-run-id") ?? response.body?.error?.details?.run_id;
  if (typeof runId !== "string") throw new Error(`${name}: no run id in ${response.status} ${response.text}`);
  return runId;
}

beforeAll(async () => {
  [t, browser, tmp] = await Promise.all([startTestService(), launchTestBrowser(), mkdtemp(path.join(tmpdir(), "browserfn-run-page-"))]);
  profileDir = profileDirOf(browser);
  expect(profileDir).not.toBe("");
  await Promise.all([t.deploy("fails", FAILS), t.deploy("pixel", PIXEL, { description: "One pixel" }), t.deploy("echo", ECHO)]);
  failedRun = await invoke("fails", { target_url: `https://example.test/${HOSTILE}`, api_token: "hunter2-very-secret" });
  pixelRun = await invoke("pixel");
  echoRun = await invoke("echo", { text: `${HOSTILE} ${"y".repeat(300)}` });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  if (profileDir) await expectNoProcessesWith(profileDir);
  await t?.destroy();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe("the dashboard's run page", () => {
  let page: Page;
  const problems: string[] = [];
  const requested: string[] = [];

  beforeAll(async () => {
    page = await watchedPage(browser, problems, requested);
    await signIn(page, t.url, t.adminKey);
  });
  afterAll(() => page?.close());

  const textOf = (selector: string) => page.$eval(selector, (element) => element.textContent ?? "");
  const count = (selector: string) => page.$$eval(selector, (elements) => elements.length);
  const open = async (hash: string, selector: string) => {
    await page.goto(`${t.url}/${hash}`);
    await page.waitForSelector(selector);
  };

  it("lists each function's last run, linked to its page", async () => {
    await page.waitForFunction(() => [...document.querySelectorAll("#functions td.last-run")].every((cell) => cell.querySelector(".badge")));
    const rows = await page.$$eval("#functions tbody tr", (trs) =>
      trs.map((tr) => [tr.querySelector(".function-link")?.textContent, tr.querySelector(".last-run .badge")?.textContent, tr.querySelector(".last-run a")?.getAttribute("href")]),
    );
    expect(rows).toEqual([
      ["echo", "succeeded", `#/runs/${echoRun}`],
      ["fails", "failed", `#/runs/${failedRun}`],
      ["pixel", "succeeded", `#/runs/${pixelRun}`],
    ]);
    expect(await page.$$eval("#functions th", (ths) => ths.map((th) => th.textContent))).toContain("Last run");
  });

  it("shows nothing under the title of a function without a description, and links its logs to the runs", async () => {
    await open("#/functions/fails", "#logs tbody tr");
    const strayText = await page.$eval("main .view", (view) => [...view.childNodes].filter((node) => node.nodeType === Node.TEXT_NODE).map((node) => node.textContent));
    expect(strayText).toEqual([]);
    expect(await page.$eval("#function-name", (title) => title.nextElementSibling?.className)).toBe("columns");
    expect(await count("#function-description")).toBe(0);

    await page.click(`#logs tbody tr:first-child a.run-link`);
    await page.waitForSelector("#run-error");
    expect(await page.evaluate(() => location.hash)).toBe(`#/runs/${failedRun}`);
    expect(await page.$eval("#run-function", (link) => link.getAttribute("href"))).toBe("#/functions/fails");

    await open("#/functions/pixel", "#function-description");
    expect(await textOf("#function-description")).toBe("One pixel");
  });

  it("shows a failed run: status, trigger, version, timings, hidden secrets, the log as written, the error and its stack", async () => {
    await open(`#/runs/${failedRun}`, "#run-error");
    const run = (await t.call("GET", `/runs/${failedRun}`)).body;
    expect(run.status).toBe("failed");

    expect(await textOf("#run-title")).toContain(failedRun);
    expect(await textOf("#run-title .badge")).toBe("failed");
    const fieldsText = await textOf("main .columns");
    expect(fieldsText).toContain("http");
    expect(fieldsText).toContain(`version${run.version}`);
    for (const at of [run.queued_at, run.started_at, run.finished_at]) {
      expect(await count(`#run-timings time[datetime="${at}"]`)).toBe(1);
    }
    expect(await textOf("#run-timings")).toMatch(/duration\d+ ms/);

    expect(JSON.parse(await textOf("#run-params"))).toEqual({ target_url: `https://example.test/${HOSTILE}`, api_token: "[secret]" });
    expect(await page.$eval("main", (main) => main.textContent ?? "")).not.toContain("hunter2");

    expect(await textOf("#run-log")).toBe(run.logs);
    expect(run.logs).toContain(`  indented line\n\tand a tab ${HOSTILE}`);
    expect(await page.$eval("#run-log", (log) => getComputedStyle(log).whiteSpace)).toMatch(/^pre/);
    expect(await page.$eval("#run-log", (log) => getComputedStyle(log).fontFamily)).toMatch(/mono/i);

    expect(await textOf("#run-error .error-code")).toBe("function_error");
    expect(await textOf("#run-error .error-message")).toBe(`Boom ${HOSTILE}`);
    // The runner keeps the stack: it is shown as kept, the automation's own frames marked.
    expect(typeof run.error.stack).toBe("string");
    expect(run.error.stack).toContain("automation.ts:4");
    expect(await textOf("#run-stack")).toBe(run.error.stack);
    const marked = await page.$$eval("#run-stack mark.user-frame", (marks) => marks.map((mark) => mark.textContent));
    // The throw is on line 4 of FAILS.
    expect(marked.filter((frame) => /^automation\.ts:4(:\d+)?$/.test(frame ?? ""))).not.toEqual([]);
    expect(await textOf("#run-result")).toBe("No result: the run failed.");
    expect(await count("#run-error *:not(strong):not(p):not(pre):not(span):not(mark)")).toBe(0);

    const file = path.join(tmp, "failed-run.png");
    await page.screenshot({ path: file, fullPage: true });
    const png = await readFile(file);
    expect(png.length).toBeGreaterThan(1000);
    expect(png.subarray(0, 8).toString("hex")).toBe("89504e470d0a1a0a");
  });

  it("marks the automation's own frames in a stack (automation.ts:N), and shows stack text as text", async () => {
    const stack = [`Error: Boom ${HOSTILE}`, "    at run (automation.ts:4:9)", "    at async invoke (/var/task/runner.js:120:3)", "    at helper (file:///x/automation.ts:12)"].join("\n");
    // The page's own module, imported in the page (as text: jest would turn an import() into a require()).
    const shown = await page.evaluate(`(async () => {
      const { runErrorView } = await import("/dashboard/runError.js");
      const view = runErrorView({ code: "function_error", message: "m", stack: ${JSON.stringify(stack)} });
      return {
        text: view.querySelector("#run-stack")?.textContent,
        marks: [...view.querySelectorAll("mark.user-frame")].map((mark) => mark.textContent),
        userLines: [...view.querySelectorAll(".frame-user")].map((line) => line.textContent.trim()),
        images: view.querySelectorAll("img").length,
      };
    })()`);
    expect(shown).toEqual({
      text: stack,
      marks: ["automation.ts:4:9", "automation.ts:12"],
      userLines: ["at run (automation.ts:4:9)", "at helper (file:///x/automation.ts:12)"],
      images: 0,
    });
  });

  it("previews a result that is a PNG data URL as an image, and an object's fields as JSON text with their images", async () => {
    await open(`#/runs/${pixelRun}`, "#run-result-images img");
    expect(JSON.parse(await textOf("#run-result"))).toBe(PNG_DATA_URL);
    await page.waitForFunction(() => (document.querySelector("#run-result-images img") as HTMLImageElement | null)?.naturalWidth === 1);
    expect(await page.$eval("#run-result-images img", (img) => img.getAttribute("src"))).toMatch(/^blob:/);
    expect(await textOf("#run-title .badge")).toBe("succeeded");
    expect(await textOf("#run-artifacts")).toBe("No artifacts.");
    expect(await count("#run-error")).toBe(0);

    await open(`#/runs/${echoRun}`, "#run-result");
    const run = (await t.call("GET", `/runs/${echoRun}`)).body;
    expect(JSON.parse(await textOf("#run-result"))).toEqual(run.result);
    expect(await textOf("#run-result")).toBe(JSON.stringify(run.result, null, 2));
    expect(await textOf("#run-result-images figcaption")).toContain("result.pixel");
    await page.waitForFunction(() => (document.querySelector("#run-result-images img") as HTMLImageElement | null)?.naturalWidth === 1);
  });

  it("previews a PDF in a result (a data URL or bare base64) in an <object> of a blob: URL typed application/pdf, with a download link", async () => {
    await t.deploy("pdf", PDF_RESULT);
    const runId = await invoke("pdf");
    await open(`#/runs/${runId}`, "#run-result-images figure.result-pdf");
    const figures = await page.$$eval("#run-result-images figure", (all) =>
      all.map((figure) => ({
        className: figure.className,
        caption: figure.querySelector("figcaption")?.textContent,
        type: figure.querySelector("object")?.getAttribute("type"),
        data: figure.querySelector("object")?.getAttribute("data") ?? "",
        href: figure.querySelector("a.result-pdf-download")?.getAttribute("href"),
        download: figure.querySelector("a.result-pdf-download")?.getAttribute("download"),
      })),
    );
    const size = Buffer.byteLength(PDF_TEXT);
    expect(figures).toEqual([
      { className: "result-pdf", caption: `result.report · application/pdf · ${size} bytes`, type: "application/pdf", data: expect.stringMatching(/^blob:/), href: figures[0]!.data, download: "result.report.pdf" },
      { className: "result-pdf", caption: `result.raw · application/pdf · ${size} bytes`, type: "application/pdf", data: expect.stringMatching(/^blob:/), href: figures[1]!.data, download: "result.raw.pdf" },
    ]);
    expect(await readBlobs(browser, t.url, figures.map((figure) => figure.data))).toEqual([
      { type: "application/pdf", base64: PDF_BASE64 },
      { type: "application/pdf", base64: PDF_BASE64 },
    ]);
    expect(JSON.parse(await textOf("#run-result"))).toEqual({ report: `data:application/pdf;base64,${PDF_BASE64}`, raw: PDF_BASE64, note: "not a pdf" });
  });

  it("shows markup in params, result, log and error as text: no element is injected", async () => {
    for (const runId of [failedRun, echoRun]) {
      await open(`#/runs/${runId}`, "#run-log");
      expect(await textOf("main")).toContain(HOSTILE);
      for (const selector of ["#run-params", "#run-log", "#run-result", "#run-title", ".error-message"]) {
        if ((await count(selector)) > 0) expect(await count(`${selector} img`)).toBe(0);
      }
      expect(await count('main img[src="x"]')).toBe(0);
    }
    expect(await page.evaluate(() => (window as unknown as { __injected?: number }).__injected)).toBeUndefined();
  });

  it("shows 'No artifacts.' for a run that kept none, and the artifacts of a run that kept some", async () => {
    const listed = await t.call("GET", `/runs/${echoRun}/artifacts`);
    expect([listed.status, listed.body.items]).toEqual([200, []]);
    await open(`#/runs/${echoRun}`, "#run-artifacts");
    expect(await textOf("#run-artifacts")).toBe("No artifacts.");
    await t.deploy("saves", SAVES);
    const runId = await invoke("saves");
    await open(`#/runs/${runId}`, "#run-artifacts li.artifact");
    expect(await page.$$eval("#run-artifacts li.artifact", (items) => items.map((item) => item.getAttribute("data-name")).sort())).toEqual(
      ["data.json", "doc.pdf", "page.html", "pixel.png"],
    );
    await page.waitForFunction(() => (document.querySelector('[data-name="pixel.png"] img.artifact-image') as HTMLImageElement | null)?.naturalWidth === 1);
    await page.waitForSelector('[data-name="page.html"] pre.artifact-text');
    expect(await textOf('[data-name="page.html"] pre.artifact-text')).toBe(`<p>hi</p>${HOSTILE}`);
    expect(JSON.parse(await textOf('[data-name="data.json"] pre.artifact-text'))).toEqual({ a: 1, b: [2] });
    expect(await page.$eval('[data-name="doc.pdf"] object.artifact-pdf', (object) => object.getAttribute("data"))).toMatch(/^blob:/);
    expect(await page.evaluate(() => (window as unknown as { __injected?: number }).__injected)).toBeUndefined();
  });

  it("lays out every page within 390 px: no sideways scroll, wide tables scroll in their box", async () => {
    await page.setViewport({ width: 390, height: 844 });
    try {
      const widths: [string, number][] = [];
      for (const [hash, selector] of [
        ["#/functions", "#functions td.last-run .badge"],
        ["#/functions/echo", "#logs tbody tr"],
        [`#/runs/${failedRun}`, "#run-error"],
        [`#/runs/${echoRun}`, "#run-result-images img"],
        ["#/usage", "#usage-functions"],
      ] as const) {
        await open(hash, selector);
        widths.push([hash, await page.evaluate(() => document.documentElement.scrollWidth)]);
      }
      expect(widths.filter(([, width]) => width > 390)).toEqual([]);
      await open("#/functions/echo", "#logs tbody tr");
      const logs = await page.$eval("#logs", (table) => ({ table: table.scrollWidth, box: table.parentElement?.clientWidth ?? 0, overflow: getComputedStyle(table.parentElement as Element).overflowX }));
      expect(logs.overflow).toBe("auto");
      expect(logs.box).toBeLessThanOrEqual(390);
      const file = path.join(tmp, "run-390.png");
      await open(`#/runs/${failedRun}`, "#run-error");
      await page.screenshot({ path: file, fullPage: true });
      expect((await readFile(file)).subarray(0, 4).toString("hex")).toBe("89504e47");
    } finally {
      await page.setViewport({ width: 1280, height: 900 });
    }
  });

  it("follows a running run live: its log as it is written and its status, then the whole run once it ended", async () => {
    await t.deploy("slow", `export default async function run() {
  console.log("first line <b>not bold</b>");
  await new Promise((resolve) => setTimeout(resolve, 5000));
  console.log("second line");
  return { done: true };
}
`);
    const accepted = await t.call("POST", "/functions/slow", { headers: { prefer: "respond-async" } });
    const runId = String(accepted.body.run_id);
    await open(`#/runs/${runId}`, "#run-title");
    // The first line shows while the run is still running (for 5 s after it: the page, the
    // stream and the browser that shows them are slow on a machine busy with other suites).
    await page.waitForFunction(() => document.querySelector("pre#run-log")?.textContent?.includes("first line"));
    expect(await textOf("#run-status")).toBe("running");
    expect(await textOf("#run-log")).not.toContain("second line");
    expect(await count("#run-log b")).toBe(0);
    // Then the page is rendered again from the ended run.
    await page.waitForFunction(() => document.querySelector("#run-status")?.textContent === "succeeded" && document.querySelector("#run-result"));
    const run = (await t.call("GET", `/runs/${runId}`)).body;
    await page.waitForFunction((logs: string) => document.querySelector("#run-log")?.textContent === logs, {}, run.logs);
    expect(requested).toContain(`${t.url}/runs/${runId}/events`);
  });

  it("shows a run recorded before the depth cap with a result 100,000 deep as failed, result_too_deep", async () => {
    const store = t.service.deps.store;
    const echo = await store.runs.get(echoRun);
    if (!echo) throw new Error("no run");
    const deepRun = { ...copyRun(echo), run_id: `${echoRun.slice(0, -4)}zzzz`, status: "running" as const };
    await store.runs.put(deepRun);
    expect(await store.runs.putIfActive({ ...deepRun, status: "succeeded", result_json: "[".repeat(100_000) + "]".repeat(100_000) })).toBe(true);
    await open(`#/runs/${deepRun.run_id}`, "#run-error");
    expect(await textOf("#run-title .badge")).toBe("failed");
    expect(await textOf("#run-error .error-code")).toBe("result_too_deep");
    expect(await textOf("#run-error .error-message")).toContain("64 levels");
    expect(await textOf("#run-result")).toBe("No result: the run failed.");
  });

  it("shows which attempt a retried run is at and how each attempt ended", async () => {
    await t.deploy("always-fails", `export default async function run() { throw new Error("always"); }`, { retries: { max_attempts: 2, backoff_seconds: 1 } });
    const answer = await t.call("POST", "/functions/always-fails", { headers: { prefer: "respond-async" } });
    const runId = String(answer.body.run_id);
    // Two attempts, each on a fresh worker process, 1 s apart: seconds more on a busy machine.
    for (const deadline = Date.now() + 20_000; !(await t.call("GET", `/runs/${runId}`)).body.finished_at && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 50));
    await open(`#/runs/${runId}`, "#run-error");
    expect(await textOf("main .columns")).toContain("2 of 2 — 1: failed (function_error), 2: failed (function_error)");
  });

  it("asked the API for the last runs and the artifacts, loaded nothing from anywhere else, and logged no error", async () => {
    expect(requested.filter((url) => url.endsWith("/logs?limit=1")).length).toBeGreaterThanOrEqual(3);
    expect(requested).toContain(`${t.url}/runs/${failedRun}/artifacts`);
    expect(requested.filter((url) => !url.startsWith(`${t.url}/`) && !url.startsWith("blob:") && !url.startsWith("data:"))).toEqual([]);
    expect(requested.filter((url) => url.includes("bfn_"))).toEqual([]);
    const expected = /Failed to load resource: the server responded with a status of (404|500)/;
    expect(problems.filter((line) => !expected.test(line))).toEqual([]);
  });
});
