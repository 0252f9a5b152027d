import { startTestService, type TestService } from "../helpers/localService";
import { startPageServer, type PageServer } from "../helpers/testBrowser";
import { isPng } from "../helpers/png";

// The Playwright driver and scripts as they are, end to end on the local service: real sandboxed
// workers, the bundled Chromium 153 driven by playwright-core 1.63 over the worker's one CDP pipe.

describe("Playwright driver and scripts as they are", () => {
  let t: TestService;
  let pages: PageServer;

  beforeAll(async () => {
    [t, pages] = await Promise.all([startTestService(), startPageServer()]);
  }, 60_000);

  afterAll(async () => {
    await t?.destroy();
    await pages?.close();
  });

  const artifactNames = async (runId: string) =>
    ((await t.call("GET", `/runs/${runId}/artifacts`)).body as { items: { name: string }[] }).items.map((item) => item.name).sort();

  it('Session.start({ driver: "playwright" }) gives Playwright\'s Page and BrowserContext on Chromium 153', async () => {
    await t.deploy(
      "pw-driver",
      `import { Session } from "browserfn/runtime";
      export default async function run(url: string) {
        await using session = await Session.start({ driver: "playwright", timeout_minutes: 1 });
        const page = await session.newPage();
        await page.goto(url);
        const second = await session.context.newPage();
        return {
          title: await page.title(),
          text: await page.locator("p").textContent(),
          version: session.context.browser()?.version(),
          pages: session.context.pages().length,
          same: second.context() === session.context,
        };
      }`,
    );
    const answer = await t.call("POST", "/functions/pw-driver", { body: { url: `${pages.base}/pw` } });
    expect(answer.body).toEqual(expect.anything());
    if (answer.status !== 200) throw new Error(answer.text);
    expect(answer.body).toEqual({ title: "Hello /pw", text: "no cookie", version: expect.stringMatching(/^153\./), pages: 2, same: true });
  }, 60_000);

  it("a failing Playwright run keeps its screenshot and HTML, names the user's line, and keeps artifacts and downloads", async () => {
    await t.deploy(
      "pw-fails",
      `import { Session, artifacts } from "browserfn/runtime";
      export default async function run(url: string) {
        const session = await Session.start({ driver: "playwright" });
        const page = await session.newPage();
        await page.goto(url);
        await artifacts.save("note.txt", "kept");
        await page.setContent('<a href="data:text/plain,hello" download="report.txt">get</a>');
        const download = page.waitForEvent("download");
        await page.click("a");
        await (await download).path();
        await page.screenshot({ path: "shots/own.png" });
        throw new Error("broke on purpose");
      }`,
    );
    const answer = await t.call("POST", "/functions/pw-fails", { body: { url: `${pages.base}/x` } });
    expect(answer.status).toBe(500);
    const error = (answer.body as { error: { code: string; message: string; details: { run_id: string; stack?: string } } }).error;
    expect(error.code).toBe("function_error");
    expect(error.message).toContain("broke on purpose");
    expect(error.details.stack).toMatch(/\n {4}at run \(automation\.ts:13:15\)/);
    const names = await artifactNames(error.details.run_id);
    expect(names).toEqual(["download-report.txt", "failure-1.html", "failure-1.png", "note.txt", "own.png"]);
    const png = await fetch(`${t.url}/runs/${error.details.run_id}/artifacts/failure-1.png`, { headers: { authorization: `Bearer ${t.adminKey}` } });
    expect(isPng(Buffer.from(await png.arrayBuffer()))).toBe(true);
  }, 60_000);
});
