import { createServer, type Server } from "node:http";
import { serveLocally } from "../helpers/pageServer";
import { startTestService, type TestService } from "../helpers/localService";
import { openEventStream } from "../helpers/eventStream";
import type { Browser } from "puppeteer-core";
import { launchTestBrowser } from "../helpers/testBrowser";
import { signIn, watchedPage } from "../helpers/dashboardPage";

// Recordings and the live view, black-box against the local service: real sandboxed workers,
// real Chromium, real HTTP. The recorder runs in an isolated world of each page (lambdas/recording),
// the live view screencasts the page being driven while someone watches (lambdas/live).

const PASSWORD = "hunter2-typed-password";
const TYPED_NAME = "typed-name-never-kept";
const SECRET = "sk-live-7f3a9c-secret-token";

/** `/form`: a login form and a paragraph; `/changing`: a page whose colour and text change every 100 ms. */
async function startPages(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    if (request.url === "/strict") {
      // No script may run, none be made from a string, nothing load: the recorder's code must still reach the page.
      const policy = "default-src 'none'; script-src 'none'; require-trusted-types-for 'script'; trusted-types 'none'";
      response.writeHead(200, { "content-type": "text/html", "content-security-policy": policy });
      response.end(`<!doctype html><title>strict</title><body><p id=text>before the change</p></body>`);
      return;
    }
    response.writeHead(200, { "content-type": "text/html" });
    if (request.url === "/opener") {
      response.end(`<!doctype html><title>opener</title><body><p>the opener</p><a id=link href="/popup?from=link" target=_blank>open</a></body>`);
      return;
    }
    if (request.url?.startsWith("/popup")) {
      const from = new URL(request.url, "http://localhost").searchParams.get("from") === "link" ? "link" : "open";
      response.end(`<!doctype html><title>popup</title><body><p id=popup-text>popup from ${from}</p><input type=password id=popup-password>
        <p id=saw></p><script>document.getElementById("saw").textContent = "saw " + typeof __browserfnRecord + "/" + typeof __browserfnTake;</script></body>`);
      return;
    }
    if (request.url === "/changing") {
      response.end(`<!doctype html><title>changing</title><body><h1 id=n>0</h1><script>
        let n = 0; setInterval(() => { n++; document.getElementById("n").textContent = String(n);
        document.body.style.background = n % 2 ? "#c03" : "#0c3"; }, 100);
        </script></body>`);
      return;
    }
    response.end(`<!doctype html><title>form</title><body><form><input type=password id=password><input id=name>
      <p id=shown>nothing yet</p></form><script>window.pageSaw = typeof __browserfnRecord + "/" + typeof __browserfnTake;</script></body>`);
  });
  return serveLocally(server);
}

/** Types a password and a name, shows the secret on the page, and fails when `fail` says so. */
const FORM_CODE = `import { Session, secrets } from "browserfn/runtime";
export default async function run(url: string, fail: boolean) {
  await using session = await Session.start();
  const page = await session.newPage();
  await page.goto(url + "/form");
  await page.type("#password", ${JSON.stringify(PASSWORD)});
  await page.type("#name", ${JSON.stringify(TYPED_NAME)});
  await page.evaluate((s) => { document.querySelector("#shown").textContent = "token is " + s; }, secrets.get("API_TOKEN"));
  const pageSaw = await page.evaluate(() => (window as any).pageSaw);
  await new Promise((resolve) => setTimeout(resolve, 300));
  if (fail) throw new Error("failed on purpose");
  return { pageSaw };
}`;

/** Opens two popups (window.open, then a target=_blank link), types a password into one, and fails; `driver` picks the session's driver. */
const popupCode = (driver: "puppeteer" | "playwright") => `import { Session } from "browserfn/runtime";
export default async function run(url: string) {
  await using session = await Session.start(${driver === "playwright" ? '{ driver: "playwright" }' : ""});
  const page: any = await session.newPage();
  await page.goto(url + "/opener");
  const popup = async (open: () => Promise<unknown>) => {
    const [opened] = await Promise.all([${driver === "playwright" ? 'page.waitForEvent("popup")' : 'new Promise<any>((resolve) => page.once("popup", resolve))'}, open()]);
    await opened.waitForSelector("#popup-text");
    return opened;
  };
  const first = await popup(() => page.evaluate((u: string) => void window.open(u + "/popup?from=open"), url));
  await popup(() => page.click("#link"));
  await first.type("#popup-password", ${JSON.stringify(PASSWORD)});
  await new Promise((resolve) => setTimeout(resolve, 300));
  throw new Error("failed with popups open");
}`;

describe("recordings and the live view", () => {
  let t: TestService;
  let pages: { url: string; close(): Promise<void> };
  let browser: Browser | undefined;
  /** The failed run whose recording the dashboard plays. */
  let failedRunId = "";

  beforeAll(async () => {
    [t, pages] = await Promise.all([startTestService(), startPages()]);
    for (const [name, recording] of [
      ["recorded", undefined],
      ["recorded-all", "all"],
      ["recorded-off", "off"],
    ] as const) {
      await t.deploy(name, FORM_CODE, recording ? { recording } : {});
      const put = await t.call("PUT", `/functions/${name}/secrets/API_TOKEN`, { body: { value: SECRET } });
      expect(put.status).toBe(204);
    }
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.destroy();
    await pages?.close();
  });

  const artifactNames = async (runId: string, token = t.adminKey) =>
    ((await t.call("GET", `/runs/${runId}/artifacts`, { token })).body as { items: { name: string }[] }).items.map((item) => item.name).sort();

  const artifactText = async (runId: string, name: string) => {
    const response = await fetch(`${t.url}/runs/${runId}/artifacts/${name}`, { headers: { authorization: `Bearer ${t.adminKey}` } });
    expect(response.status).toBe(200);
    return response.text();
  };

  /** Invokes `name` and returns its run id and answer status. */
  const invoke = async (name: string, fail: boolean) => {
    const answer = await t.call("POST", `/functions/${name}`, { body: { url: pages.url, fail } });
    return { runId: String(answer.headers.get("x-run-id") ?? (answer.body as { error?: { run_id?: string } }).error?.run_id), answer };
  };

  /** Invokes `name`, which fails, and returns its run's id (from the error's details). */
  const failedRun = async (name: string, body: unknown) => {
    const answer = await t.call("POST", `/functions/${name}`, { body });
    expect(answer.status).toBe(500);
    return String((answer.body as { error: { details: { run_id: string } } }).error.details.run_id);
  };

  it("takes recording off | failures | all, failures by default; anything else is 400", async () => {
    // Created without the setting.
    const info = await t.call("GET", "/functions/recorded/info");
    expect((info.body as { recording: string }).recording).toBe("failures");
    expect(((await t.call("GET", "/functions/recorded-off/info")).body as { recording: string }).recording).toBe("off");
    const bad = await t.call("PATCH", "/functions/recorded", { body: { recording: "sometimes" } });
    expect(bad.status).toBe(400);
    expect((bad.body as { error: { code: string } }).error.code).toBe("invalid_request");
  });

  it("keeps a failed run's recording under the default (`failures`): the page's DOM, with no typed input and no secret value", async () => {
    const { runId, answer } = await invoke("recorded", true);
    expect(answer.status).toBe(500);
    failedRunId = runId;
    expect(await artifactNames(runId)).toEqual(["failure-1.html", "failure-1.png", "recording-1.json"]);
    const text = await artifactText(runId, "recording-1.json");
    const events = JSON.parse(text) as { type: number; timestamp: number; data: unknown }[];
    // A meta event and a full snapshot of the form page, then what changed on it.
    expect(events.some((event) => event.type === 4 && JSON.stringify(event.data).includes("/form"))).toBe(true);
    expect(events.some((event) => event.type === 2 && JSON.stringify(event.data).includes("nothing yet"))).toBe(true);
    expect(text).toContain("token is [secret]");
    expect(text).not.toContain(PASSWORD);
    expect(text).not.toContain(TYPED_NAME);
    expect(text).not.toContain(SECRET);
  }, 90_000);

  it("keeps no recording of a succeeded run under the default, and one under `all`; the page never sees the recorder", async () => {
    const kept = await invoke("recorded", false);
    expect(kept.answer.status).toBe(200);
    // The recorder and its binding live in an isolated world: the page's own scripts see neither.
    expect(kept.answer.body).toEqual({ pageSaw: "undefined/undefined" });
    expect(await artifactNames(kept.runId)).toEqual([]);
    const all = await invoke("recorded-all", false);
    expect(all.answer.status).toBe(200);
    expect(await artifactNames(all.runId)).toEqual(["recording-1.json"]);
    expect(await artifactText(all.runId, "recording-1.json")).not.toContain(PASSWORD);
  }, 90_000);

  it("keeps none when recording is off, failed or not", async () => {
    const { runId, answer } = await invoke("recorded-off", true);
    expect(answer.status).toBe(500);
    expect(await artifactNames(runId)).toEqual(["failure-1.html", "failure-1.png"]);
  }, 90_000);

  it.each(["puppeteer", "playwright"] as const)("records the pages a run's page opens (window.open, target=_blank), each its own recording, masked and unseen (%s)", async (driver) => {
    await t.deploy(`popups-${driver}`, popupCode(driver));
    const answer = await t.call("POST", `/functions/popups-${driver}`, { body: { url: pages.url } });
    expect(answer.status).toBe(500);
    const runId = String(answer.headers.get("x-run-id") ?? (answer.body as { error?: { run_id?: string } }).error?.run_id);
    expect((await artifactNames(runId)).filter((name) => name.startsWith("recording-"))).toEqual(["recording-1.json", "recording-2.json", "recording-3.json"]);
    const [opener = "", opened = "", linked = ""] = await Promise.all([1, 2, 3].map((n) => artifactText(runId, `recording-${n}.json`)));
    expect(opener).toContain("the opener");
    expect(opened).toContain("popup from open");
    expect(linked).toContain("popup from link");
    for (const text of [opened, linked]) {
      const events = JSON.parse(text) as { type: number }[];
      expect(events.some((event) => event.type === 2)).toBe(true);
      // The popup's scripts see neither the recorder nor its binding.
      expect(text).toContain("saw undefined/undefined");
    }
    for (const text of [opener, opened, linked]) expect(text).not.toContain(PASSWORD);
  }, 90_000);

  it("records the pages a run opens on a context itself and through Playwright's and Puppeteer's launch(), each its own recording", async () => {
    await t.deploy(
      "every-opening",
      `import { Session } from "browserfn/runtime";
      import { chromium } from "playwright";
      import puppeteer from "puppeteer";
      export default async function run(url: string) {
        const show = async (page: any, text: string) => {
          await page.goto(url + "/form");
          await page.evaluate((t: string) => { document.querySelector("#shown")!.textContent = t; }, text);
        };
        await using plain = await Session.start();
        await show(await plain.context.newPage(), "opened on the puppeteer context");
        await using pw = await Session.start({ driver: "playwright" });
        await show(await pw.context.newPage(), "opened on the playwright context");
        const launched = await chromium.launch();
        await show(await launched.newPage(), "opened by a playwright launch");
        await show(await (await launched.newContext()).newPage(), "opened in a launch's context");
        const pptr = await puppeteer.launch();
        await show(await (await pptr.createBrowserContext()).newPage(), "opened in a puppeteer launch's context");
        await new Promise((resolve) => setTimeout(resolve, 300));
        // Closed before the run ends: what their pages' recorders held is taken first.
        await launched.close();
        await pptr.close();
        await pw.close();
        return "done";
      }`,
      { recording: "all" },
    );
    const answer = await t.call("POST", "/functions/every-opening", { body: { url: pages.url } });
    if (answer.status !== 200) throw new Error(answer.text);
    const runId = String(answer.headers.get("x-run-id"));
    const names = (await artifactNames(runId)).filter((name) => name.startsWith("recording-"));
    const texts = (await Promise.all(names.map((name) => artifactText(runId, name)))).join("\n");
    expect(names).toHaveLength(5);
    for (const shown of ["opened on the puppeteer context", "opened on the playwright context", "opened by a playwright launch", "opened in a launch's context", "opened in a puppeteer launch's context"]) {
      expect(texts).toContain(shown);
    }
  }, 90_000);

  it("records a page written with setContent (into its first, empty about:blank)", async () => {
    await t.deploy(
      "written",
      `import { Session } from "browserfn/runtime";
      export default async function run() {
        await using session = await Session.start();
        const page = await session.newPage();
        await page.setContent("<p>written into about:blank</p>");
        await new Promise((resolve) => setTimeout(resolve, 300));
        throw new Error("failed after setContent");
      }`,
    );
    const runId = await failedRun("written", {});
    expect(await artifactText(runId, "recording-1.json")).toContain("written into about:blank");
  }, 60_000);

  it("records a page whose Content-Security-Policy allows no script at all, and what the run changed on it after it loaded", async () => {
    await t.deploy(
      "strict",
      `import { Session } from "browserfn/runtime";
      export default async function run(url: string) {
        await using session = await Session.start();
        const page = await session.newPage();
        await page.goto(url + "/strict");
        // Recording has begun by now (the page's first idle moment, 1 s after the document at the
        // latest, then rrweb evaluated over CDP: longer than 600 ms on a machine busy with other
        // suites): the change is an event of its own.
        await new Promise((resolve) => setTimeout(resolve, 2500));
        await page.evaluate(() => { document.getElementById("text")!.textContent = "after the change"; });
        await new Promise((resolve) => setTimeout(resolve, 100));
        throw new Error("failed on the strict page");
      }`,
    );
    const runId = await failedRun("strict", { url: pages.url });
    const events = JSON.parse(await artifactText(runId, "recording-1.json")) as { type: number; data: unknown }[];
    const snapshot = events.findIndex((event) => event.type === 2);
    expect(JSON.stringify(events[snapshot]?.data)).toContain("before the change");
    // An incremental event after the snapshot: the recorder was running when the run changed the page.
    expect(events.slice(snapshot + 1).some((event) => event.type === 3 && JSON.stringify(event.data).includes("after the change"))).toBe(true);
  }, 60_000);

  it("streams live frames of a page that changes, at most 5 per second, then `end`; another account gets 404", async () => {
    await t.deploy(
      "watched",
      `import { Session } from "browserfn/runtime";
      export default async function run(url: string) {
        await using session = await Session.start();
        const page = await session.newPage();
        await page.goto(url + "/changing");
        await new Promise((resolve) => setTimeout(resolve, 4000));
        return { n: await page.$eval("#n", (el) => el.textContent) };
      }`,
    );
    const started = await t.call("POST", "/functions/watched", { body: { url: pages.url }, headers: { prefer: "respond-async" } });
    expect(started.status).toBe(202);
    const runId = String((started.body as { run_id: string }).run_id);
    // Watched at once (it reads in the background): the other account's checks below must not
    // use up the run's seconds before the watcher comes, on a machine busy with other suites.
    const stream = await openEventStream(t.url, `/runs/${runId}/live`, { token: t.adminKey });
    expect(stream.status).toBe(200);

    const other = await t.newAccount("stranger");
    const refused = await openEventStream(t.url, `/runs/${runId}/live`, { token: other });
    expect(refused.status).toBe(404);
    expect(JSON.parse(refused.text).error.code).toBe("run_not_found");
    expect((await t.call("GET", `/runs/${runId}/artifacts/recording-1.json`, { token: other })).status).toBe(404);

    await stream.ended;
    // Frames of the page before it navigated (about:blank) may come first, when the watcher was there before.
    const frames = stream.events.filter((event) => event.event === "frame" && event.json.url !== "about:blank");
    const end = stream.events.at(-1);
    expect(end?.event).toBe("end");
    expect(end?.json).toEqual({ run_id: runId, status: "succeeded" });
    expect(frames.length).toBeGreaterThanOrEqual(3);
    for (const frame of frames) {
      const jpeg = Buffer.from(String(frame.json.data), "base64");
      expect([jpeg[0], jpeg[1]]).toEqual([0xff, 0xd8]);
      expect(jpeg.byteLength).toBeLessThanOrEqual(200 * 1024);
      expect(frame.json.url).toBe(`${pages.url}/changing`);
      expect(frame.json.width).toBeGreaterThan(0);
      expect(frame.json.height).toBeGreaterThan(0);
    }
    // The page changes: so do its frames.
    expect(new Set(frames.map((frame) => frame.json.data)).size).toBeGreaterThan(1);
    // At most 5 per second, by the service's clock.
    const times = frames.map((frame) => Date.parse(String(frame.json.at)));
    for (let i = 1; i < times.length; i++) expect((times[i] as number) - (times[i - 1] as number)).toBeGreaterThanOrEqual(190);
  }, 90_000);

  it("streams live frames of a page a script's chromium.launch() opened", async () => {
    await t.deploy(
      "watched-launch",
      `import { chromium } from "playwright";
      export default async function run(url: string) {
        const browser = await chromium.launch();
        const page = await browser.newPage();
        await page.goto(url + "/changing");
        await new Promise((resolve) => setTimeout(resolve, 3000));
        await browser.close();
        return "watched";
      }`,
    );
    const started = await t.call("POST", "/functions/watched-launch", { body: { url: pages.url }, headers: { prefer: "respond-async" } });
    expect(started.status).toBe(202);
    const runId = String((started.body as { run_id: string }).run_id);
    const stream = await openEventStream(t.url, `/runs/${runId}/live`, { token: t.adminKey });
    expect(stream.status).toBe(200);
    await stream.ended;
    const frames = stream.events.filter((event) => event.event === "frame" && event.json.url === `${pages.url}/changing`);
    expect(frames.length).toBeGreaterThanOrEqual(2);
    expect(stream.events.at(-1)?.json).toEqual({ run_id: runId, status: "succeeded" });
  }, 90_000);

  it("the dashboard's run page plays the recording at the failing moment, beside the error, its source line and screenshot, with no CSP violation", async () => {
    expect(failedRunId).not.toBe("");
    browser = await launchTestBrowser();
    const problems: string[] = [];
    const requested: string[] = [];
    const page = await watchedPage(browser, problems, requested);
    await signIn(page, t.url, t.adminKey);
    await page.goto(`${t.url}/#/runs/${failedRunId}`);
    await page.waitForSelector("#replay-frame");
    expect(await page.$eval("#replay-source-line", (el) => el.textContent)).toMatch(/automation\.ts:\d+/);
    await page.waitForSelector("#replay-screenshot img");
    const frame = page.frames().find((f) => f.url().endsWith("/dashboard/replay.html"));
    expect(frame).toBeDefined();
    // The recorded form page, rebuilt in the player at the failing moment (its last seconds, from the page's load).
    const pageText = (expected: string) =>
      frame?.waitForFunction(
        (wanted: string) => {
          const inner = document.querySelector(".rr-player iframe") as HTMLIFrameElement | null;
          const text = inner?.contentDocument?.body?.textContent ?? "";
          return text.includes(wanted) ? text : false;
        },
        { timeout: 20_000 },
        expected,
      );
    await pageText("nothing yet");
    // Played from there: the page as the run left it (the secret redacted).
    await page.click("#replay-failing-moment");
    const shown = await pageText("token is");
    const text = String(await shown?.jsonValue());
    expect(text).toContain("token is [secret]");
    expect(text).not.toContain(SECRET);
    expect(problems).toEqual([]);
    // Nothing from elsewhere: the dashboard's own origin only (and blob: URLs it made, data: the player holds inline).
    expect(requested.filter((url) => !url.startsWith(t.url) && !/^(blob|data):/.test(url))).toEqual([]);
  }, 90_000);
});
