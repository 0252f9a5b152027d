import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { startTestService, type TestService } from "../helpers/localService";
import { startPageServer, type PageServer } from "../helpers/testBrowser";
import { isPng } from "../helpers/png";

// Artifacts end to end on the local service: the runtime's artifacts.save in a real sandboxed
// worker, the parts sent over the worker's channel, files under the data dir, the routes.

/** A 1×1 PNG. */
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==", "base64");

describe("artifacts", () => {
  let t: TestService;
  let pages: PageServer;

  beforeAll(async () => {
    [t, pages] = await Promise.all([startTestService(), startPageServer()]);
  }, 60_000);

  afterAll(async () => {
    await t?.destroy();
    await pages?.close();
  });

  /** The names `GET /runs/{id}/artifacts` lists. */
  const artifactNames = async (runId: string) =>
    ((await t.call("GET", `/runs/${runId}/artifacts`)).body as { items: { name: string }[] }).items.map((item) => item.name);

  const fetchBytes = (url: string, token: string | null = t.adminKey) =>
    fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {}, redirect: "manual" });

  it("keeps what a run saves, lists it, serves its bytes with its type; another account gets 404", async () => {
    await t.deploy(
      "saver",
      `import { artifacts } from "browserfn/runtime";
      export default async (png: string) => {
        const image = await artifacts.save("shot.png", Buffer.from(png, "base64"));
        const big = await artifacts.save("big.bin", new Uint8Array(700_000).fill(7), { contentType: "application/octet-stream" });
        const text = await artifacts.save("notes.txt", "hello");
        return { image, big, text };
      }`,
    );
    const answer = await t.call("POST", "/functions/saver", { body: { png: PNG.toString("base64") } });
    expect(answer.status).toBe(200);
    const runId = String((answer.body as { image: { url: string } }).image.url.split("/runs/")[1]?.split("/")[0]);
    expect(runId).toMatch(/^run_[0-9a-z]{26}$/);
    const base = `${t.url}/runs/${runId}/artifacts`;
    expect(answer.body).toEqual({
      image: { name: "shot.png", url: `${base}/shot.png`, bytes: PNG.length },
      big: { name: "big.bin", url: `${base}/big.bin`, bytes: 700_000 },
      text: { name: "notes.txt", url: `${base}/notes.txt`, bytes: 5 },
    });
    const listed = await t.call("GET", `/runs/${runId}/artifacts`);
    expect(listed.status).toBe(200);
    expect((listed.body as { items: unknown[] }).items).toEqual([
      { name: "big.bin", content_type: "application/octet-stream", bytes: 700_000, created_at: expect.any(String), attempt: 1, url: `${base}/big.bin` },
      { name: "notes.txt", content_type: "text/plain; charset=utf-8", bytes: 5, created_at: expect.any(String), attempt: 1, url: `${base}/notes.txt` },
      { name: "shot.png", content_type: "image/png", bytes: PNG.length, created_at: expect.any(String), attempt: 1, url: `${base}/shot.png` },
    ]);
    const image = await fetchBytes(`${base}/shot.png`);
    expect([image.status, image.headers.get("content-type"), image.headers.get("content-disposition")]).toEqual([200, "image/png", 'attachment; filename="shot.png"']);
    expect(Buffer.from(await image.arrayBuffer()).equals(PNG)).toBe(true);
    const big = Buffer.from(await (await fetchBytes(`${base}/big.bin`)).arrayBuffer());
    expect([big.length, big.every((byte) => byte === 7)]).toEqual([700_000, true]);

    const other = await t.newAccount("artifact-stranger");
    expect((await t.call("GET", `/runs/${runId}/artifacts`, { token: other })).status).toBe(404);
    expect((await fetchBytes(`${base}/shot.png`, other)).status).toBe(404);
    expect((await fetchBytes(`${base}/shot.png`, null)).status).toBe(401);
    expect((await fetchBytes(`${base}/missing.png`)).status).toBe(404);
    expect((await fetchBytes(`${base}/..`)).status).toBe(404);
    const usage = (await t.call("GET", "/usage")).body as { total: { artifact_bytes: number } };
    expect(usage.total.artifact_bytes).toBe(PNG.length + 700_000 + 5);
  }, 60_000);

  it("keeps a screenshot and the HTML of each open page when a run throws inside `await using`", async () => {
    await t.deploy(
      "breaks",
      `import { Session } from "browserfn/runtime";
      export default async (url: string) => {
        await using session = await Session.start();
        const page = await session.newPage();
        await page.goto(url);
        throw new Error("the button was not there");
      }`,
    );
    const answer = await t.call("POST", "/functions/breaks", { body: { url: `${pages.base}/evidence` } });
    expect([answer.status, (answer.body as { error: { code: string } }).error.code]).toEqual([500, "function_error"]);
    const runId = String((answer.body as { error: { details: { run_id: string } } }).error.details.run_id);
    const names = await artifactNames(runId);
    // Beside the evidence, the page's recording: a failed run keeps it under the default `recording: "failures"`.
    expect(names).toEqual(["failure-1.html", "failure-1.png", "recording-1.json"]);
    const png = Buffer.from(await (await fetchBytes(`${t.url}/runs/${runId}/artifacts/failure-1.png`)).arrayBuffer());
    expect(isPng(png)).toBe(true);
    const html = await (await fetchBytes(`${t.url}/runs/${runId}/artifacts/failure-1.html`)).text();
    expect(html).toContain("Hello /evidence");
    const run = (await t.call("GET", `/runs/${runId}`)).body as { logs: string; error: { message: string } };
    expect(run.error.message).toBe("the button was not there");
    expect(run.logs).toBe(`ERROR [browserfn] page 1 was at ${pages.base}/evidence: kept failure-1.png, failure-1.html\n`);
  }, 60_000);

  it("names the failing page's URL in the logs of a run that logged past the 64 KB cap", async () => {
    await t.deploy(
      "chatty-breaks",
      `import { Session } from "browserfn/runtime";
      export default async (url: string) => {
        await using session = await Session.start();
        const page = await session.newPage();
        await page.goto(url);
        for (let i = 0; i < 100; i++) console.log(i, "y".repeat(1024));
        throw new Error("lost in the noise");
      }`,
    );
    const answer = await t.call("POST", "/functions/chatty-breaks", { body: { url: `${pages.base}/noisy?q=1` } });
    expect(answer.status).toBe(500);
    const runId = String(answer.headers.get("x-run-id"));
    const { logs } = (await t.call("GET", `/runs/${runId}`)).body as { logs: string };
    expect(Buffer.byteLength(logs)).toBeLessThanOrEqual(64 * 1024);
    expect(logs.startsWith(`LOG 0 ${"y".repeat(1024)}\n`)).toBe(true);
    expect(logs.endsWith(`…[output truncated]\nERROR [browserfn] page 1 was at ${pages.base}/noisy?q=1: kept failure-1.png, failure-1.html\n`)).toBe(true);
    expect(await artifactNames(runId)).toEqual(["failure-1.html", "failure-1.png", "recording-1.json"]);
  }, 60_000);

  it("keeps the evidence and the logs of a run that times out with a page open", async () => {
    await t.deploy(
      "hangs",
      `import { Session } from "browserfn/runtime";
      export default async (url: string) => {
        await using session = await Session.start();
        const page = await session.newPage();
        await page.goto(url);
        console.log("waiting forever");
        await new Promise(() => undefined);
      }`,
      { timeout_seconds: 3 },
    );
    const answer = await t.call("POST", "/functions/hangs", { body: { url: `${pages.base}/stuck` } });
    expect([answer.status, (answer.body as { error: { code: string } }).error.code]).toEqual([504, "function_timeout"]);
    const runId = String((answer.body as { error: { details: { run_id: string } } }).error.details.run_id);
    const stored = await t.service.deps.store.runs.get(runId);
    expect(stored).toMatchObject({ status: "timed_out" });
    expect(stored?.logs).toContain("LOG waiting forever");
    expect(stored?.logs).toMatch(/page 1 was at http:\/\/127\.0\.0\.1:\d+\/stuck: kept failure-1\.png, failure-1\.html/);
    const names = await artifactNames(runId);
    expect(names).toEqual(["failure-1.html", "failure-1.png", "recording-1.json"]);
  }, 60_000);

  it("holds a run to 100 artifacts and 100 MB, in the runtime and again in the service against a worker that sends more", async () => {
    await t.deploy(
      "greedy",
      `import { artifacts } from "browserfn/runtime";
      import { writeSync } from "node:fs";
      export default async () => {
        let url = "";
        for (let i = 0; i < 100; i++) url = (await artifacts.save("f" + i + ".txt", "x")).url;
        const runId = url.split("/runs/")[1].split("/")[0];
        const refused = await artifacts.save("one-more.txt", "x").then(() => "saved", (error) => error.message);
        const tooBig = await artifacts.save("f0.txt", new Uint8Array(100 * 1024 * 1024 + 1)).then(() => "saved", (error) => error.message);
        const badName = await artifacts.save("../escape", "x").then(() => "saved", (error) => error.message);
        // Past the runtime's checks: straight onto the worker's channel (its descriptor: process.send is the runtime's).
        for (let i = 0; i < 5; i++) {
          writeSync(3, JSON.stringify({ type: "artifact", runId, name: "sneaky" + i + ".txt", content_type: "text/plain", data: "eA==", last: true }) + "\\n");
        }
        return { refused, tooBig, badName };
      }`,
    );
    const answer = await t.call("POST", "/functions/greedy");
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      refused: "A run keeps at most 100 artifacts; 'one-more.txt' would be one more",
      tooBig: expect.stringMatching(/^A run keeps at most 100 MB of artifacts/),
      badName: expect.stringMatching(/^An artifact's name is a file name/),
    });
    const runs = (await t.call("GET", "/functions/greedy/logs")).body as { items: { run_id: string }[] };
    const runId = runs.items[0]?.run_id ?? "";
    const names = await artifactNames(runId);
    expect(names).toHaveLength(100);
    expect(names.some((name) => name.startsWith("sneaky"))).toBe(false);
  }, 60_000);
});

describe("downloads", () => {
  it("keeps what a page downloads as an artifact", async () => {
    const server = createServer((req, res) => {
      if (req.url === "/report.csv") {
        res.writeHead(200, { "content-type": "text/csv", "content-disposition": 'attachment; filename="report.csv"' });
        return res.end("id,total\n1,42\n");
      }
      res.writeHead(200, { "content-type": "text/html" }).end('<a id="get" href="/report.csv" download>report</a>');
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const t = await startTestService();
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      await t.deploy(
        "downloader",
        `import { Session } from "browserfn/runtime";
        export default async (url: string) => {
          await using session = await Session.start();
          const page = await session.newPage();
          await page.goto(url);
          await page.evaluate(() => (document.getElementById("get") as HTMLElement).click());
          await new Promise((resolve) => setTimeout(resolve, 1500));
          return "clicked";
        }`,
      );
      const answer = await t.call("POST", "/functions/downloader", { body: { url: base } });
      expect([answer.status, answer.body]).toEqual([200, "clicked"]);
      const runId = ((await t.call("GET", "/functions/downloader/logs")).body as { items: { run_id: string }[] }).items[0]?.run_id ?? "";
      const items = ((await t.call("GET", `/runs/${runId}/artifacts`)).body as { items: { name: string; content_type: string; bytes: number }[] }).items;
      expect(items).toEqual([expect.objectContaining({ name: "download-report.csv", content_type: "text/csv; charset=utf-8", bytes: 14 })]);
      const bytes = await fetch(`${t.url}/runs/${runId}/artifacts/download-report.csv`, { headers: { authorization: `Bearer ${t.adminKey}` } });
      expect(await bytes.text()).toBe("id,total\n1,42\n");
      // The next run on the same warm worker (and browser) keeps its own download, once.
      const again = await t.call("POST", "/functions/downloader", { body: { url: base } });
      const secondRun = String(again.headers.get("x-run-id"));
      expect(secondRun).not.toBe(runId);
      const secondItems = ((await t.call("GET", `/runs/${secondRun}/artifacts`)).body as { items: { name: string }[] }).items;
      expect(secondItems.map((item) => item.name)).toEqual(["download-report.csv"]);
      expect(((await t.call("GET", `/runs/${runId}/artifacts`)).body as { items: unknown[] }).items).toHaveLength(1);
    } finally {
      await t.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  }, 60_000);
});
