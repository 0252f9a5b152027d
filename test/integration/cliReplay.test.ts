import { mkdtemp, readFile, readdir, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser } from "puppeteer-core";
import { FIXTURES, cliEnv, runCli } from "../fixtures/cli/runCli";
import { type TestService, startTestService } from "../helpers/localService";
import { launchTestBrowser, startPageServer, type PageServer } from "../helpers/testBrowser";

// `browserfn runs replay RUN`: the run's recordings and a self-contained HTML player of each,
// written into a folder whose path it prints; the player plays offline in a real browser.
describe("browserfn runs replay, against a real local service", () => {
  let svc: TestService;
  let pages: PageServer;
  let browser: Browser;
  let home: string;
  let env: NodeJS.ProcessEnv;
  const cli = (...args: string[]) => runCli(args, env, "", home);

  beforeAll(async () => {
    [svc, pages, browser] = await Promise.all([startTestService(), startPageServer(), launchTestBrowser()]);
    home = await mkdtemp(path.join(tmpdir(), "browserfn-cli-replay-"));
    env = cliEnv(home, { BROWSERFN_URL: svc.url, BROWSERFN_API_KEY: svc.adminKey });
    expect((await cli("deploy", path.join(FIXTURES, "failsOnPage.ts"), "--name", "fails-on-page")).code).toBe(0);
    // Recordings are off by default: this function keeps those of its failed runs.
    expect((await svc.call("PATCH", "/functions/fails-on-page", { body: { recording: "failures" } })).status).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await pages?.close();
    await svc?.destroy();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it("writes recording-1.json and replay-1.html into the folder it prints; the player shows the recorded page offline", async () => {
    const failed = await svc.call("POST", "/functions/fails-on-page", { body: { url: `${pages.base}/title/replayed-page` } });
    expect(failed.status).toBe(500);
    const runId = failed.headers.get("x-run-id") ?? (failed.body as { error: { details: { run_id: string } } }).error.details.run_id;

    const replayed = await cli("runs", "replay", runId);
    expect(replayed.stderr).toMatch(/Wrote .*recording-1\.json \(\d+ events\) and .*replay-1\.html/);
    expect(replayed.code).toBe(0);
    const dir = replayed.stdout.trim();
    expect(dir).toBe(path.join(await realpath(home), `replay-${runId}`));
    expect((await readdir(dir)).sort()).toEqual(["recording-1.json", "replay-1.html"]);
    const events = JSON.parse(await readFile(path.join(dir, "recording-1.json"), "utf8")) as { type: number }[];
    expect(events.some((event) => event.type === 2)).toBe(true);

    // Offline: every request the player makes is refused, and it still plays the page.
    const page = await browser.newPage();
    const requested: string[] = [];
    await page.setRequestInterception(true);
    page.on("request", (request) => {
      // The file itself, and what it holds inline (data:), are not the network.
      if (/^(file|about|data):/.test(request.url())) return void request.continue();
      requested.push(request.url());
      void request.abort();
    });
    await page.goto(`file://${path.join(dir, "replay-1.html")}`);
    await page.waitForSelector(".rr-player");
    const shown = await page.waitForFunction(
      () => {
        // The recorded page, rebuilt in the player's frame: its title names the path it was at.
        const frame = document.querySelector(".rr-player iframe") as HTMLIFrameElement | null;
        return frame?.contentDocument?.title?.includes("replayed-page") ? frame.contentDocument.title : false;
      },
      { timeout: 15_000 },
    );
    expect(await shown.jsonValue()).toContain("replayed-page");
    expect(requested).toEqual([]);
    await page.close();
  }, 120_000);

  it("says so when the run kept no recording (exit 3)", async () => {
    const ok = await cli("deploy", path.join(FIXTURES, "saves.ts"));
    expect(ok.code).toBe(0);
    const invoked = await svc.call("POST", "/functions/saves", { body: { text: "hi" } });
    expect(invoked.status).toBe(200);
    const runId = invoked.headers.get("x-run-id") ?? "";
    const replayed = await cli("runs", "replay", runId, "--out", path.join(home, "none"));
    expect(replayed.code).toBe(3);
    expect(replayed.stderr).toContain(`The run ${runId} kept no recording`);
    expect(await readdir(home)).not.toContain("none");
  }, 60_000);
});
