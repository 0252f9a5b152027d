import { startTestService, type TestService } from "../helpers/localService";
import { startPageServer, type PageServer } from "../helpers/testBrowser";
import { isPng } from "../helpers/png";

// A run whose code blocks its worker's event loop cannot keep its own evidence at its timeout:
// the sandbox's host takes it over the browser's pipe before the worker is killed.

const SECRET = "hunter2-evidence-value";

describe.each(["namespaces", "process"] as const)("a run stuck in its own code (%s sandbox)", (mode) => {
  let t: TestService;
  let pages: PageServer;

  beforeAll(async () => {
    [t, pages] = await Promise.all([startTestService({ config: { sandbox: mode } }), startPageServer()]);
    expect(t.service.sandbox.mode).toBe(mode);
  }, 60_000);

  afterAll(async () => {
    await t?.destroy();
    await pages?.close();
  });

  it("keeps the screenshot, the HTML (secrets redacted) and the URL of its pages, and its logs", async () => {
    await t.deploy(
      "spins",
      `import { Session, secrets } from "browserfn/runtime";
      export default async (url: string) => {
        await using session = await Session.start();
        const page = await session.newPage();
        await page.goto(url);
        await page.evaluate((value) => { document.body.insertAdjacentHTML("beforeend", "<p id=marker>stuck here " + value + "</p>"); }, secrets.get("TOKEN"));
        console.log("about to spin");
        await new Promise((resolve) => setTimeout(resolve, 50)); // the log line leaves before the loop
        for (;;) {}
      }`,
      { timeout_seconds: 2 },
    );
    expect((await t.call("PUT", "/functions/spins/secrets/TOKEN", { body: { value: SECRET } })).status).toBe(204);
    const answer = await t.call("POST", "/functions/spins", { body: { url: `${pages.base}/spinning` } });
    expect([answer.status, (answer.body as { error: { code: string } }).error.code]).toEqual([504, "function_timeout"]);
    const runId = String((answer.body as { error: { details: { run_id: string } } }).error.details.run_id);

    const stored = await t.service.deps.store.runs.get(runId);
    expect(stored).toMatchObject({ status: "timed_out" });
    expect(stored?.logs).toContain("LOG about to spin");
    expect(stored?.logs).toMatch(/page 1 was at http:\/\/127\.0\.0\.1:\d+\/spinning: kept failure-1\.png, failure-1\.html/);

    const listed = (await t.call("GET", `/runs/${runId}/artifacts`)).body as { items: { name: string; url: string; content_type: string }[] };
    expect(listed.items.map((item) => item.name).sort()).toEqual(["failure-1.html", "failure-1.png"]);
    const fetchArtifact = async (name: string) => {
      const item = listed.items.find((entry) => entry.name === name);
      const response = await fetch(String(item?.url), { headers: { authorization: `Bearer ${t.adminKey}` } });
      expect(response.status).toBe(200);
      return Buffer.from(await response.arrayBuffer());
    };
    const png = await fetchArtifact("failure-1.png");
    expect(isPng(png)).toBe(true);
    expect(png.length).toBeGreaterThan(1000); // a real viewport, not an empty image
    const html = (await fetchArtifact("failure-1.html")).toString("utf8");
    expect(html).toContain("<title>Hello /spinning</title>");
    expect(html).toContain("stuck here [secret]");
    expect(html).not.toContain(SECRET);
  }, 60_000);

  it("names the page's URL after output past the log cap", async () => {
    await t.deploy(
      "chatty-spinner",
      `import { Session } from "browserfn/runtime";
      export default async (url: string) => {
        await using session = await Session.start();
        const page = await session.newPage();
        await page.goto(url);
        for (let i = 0; i < 1000; i++) console.log("x".repeat(100));
        await new Promise((resolve) => setTimeout(resolve, 50));
        for (;;) {}
      }`,
      { timeout_seconds: 2 },
    );
    const answer = await t.call("POST", "/functions/chatty-spinner", { body: { url: `${pages.base}/chatty` } });
    expect(answer.status).toBe(504);
    const runId = String((answer.body as { error: { details: { run_id: string } } }).error.details.run_id);
    const logs = String((await t.service.deps.store.runs.get(runId))?.logs);
    expect(logs).toContain("…[output truncated]\n");
    expect(logs).toMatch(/page 1 was at http:\/\/127\.0\.0\.1:\d+\/chatty: kept failure-1\.png, failure-1\.html/);
    expect(Buffer.byteLength(logs, "utf8")).toBeLessThanOrEqual(64 * 1024);
  }, 60_000);

  it("still runs the function's next invocation (the stuck worker was replaced)", async () => {
    await t.deploy("after", "export default async () => 'fine';");
    const answer = await t.call("POST", "/functions/after");
    expect([answer.status, answer.body]).toEqual([200, "fine"]);
  }, 30_000);
});
