import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { compileCode } from "../../lambdas/code/compileCode";
import { runInvocation } from "../../lambdas/runner/runInvocation";
import { startTestService, type TestService } from "../helpers/localService";
import { launchTestBrowser, startPageServer, type PageServer } from "../helpers/testBrowser";
import { isPng } from "../helpers/png";

// File paths in automation code, on the local service (real sandboxed workers under the
// permission model, real Chromium): `page.screenshot({ path })` and `page.pdf({ path })` keep
// their file as an artifact; any other write fails with the fix in the run's error.


describe("file paths in automations", () => {
  let t: TestService;
  let pages: PageServer;

  beforeAll(async () => {
    [t, pages] = await Promise.all([startTestService(), startPageServer()]);
  }, 60_000);

  afterAll(async () => {
    await t?.destroy();
    await pages?.close();
  });

  const artifact = async (runId: string, name: string) => {
    const response = await fetch(`${t.url}/runs/${runId}/artifacts/${name}`, { headers: { authorization: `Bearer ${t.adminKey}` } });
    return { status: response.status, type: response.headers.get("content-type"), bytes: Buffer.from(await response.arrayBuffer()) };
  };

  it("keeps page.screenshot({ path }) and page.pdf({ path }) as artifacts named after the path, returns their bytes, and says so in the log", async () => {
    await t.deploy(
      "shooter",
      `import { Session } from "browserfn/runtime";
      export default async (url: string) => {
        await using session = await Session.start();
        const page = await session.newPage();
        await page.goto(url);
        const shot = await page.screenshot({ path: "shots/shot.png" });
        const jpeg = await page.screenshot({ path: "/tmp/photo.jpg" });
        const pdf = await page.pdf({ path: "/tmp/report.pdf" });
        const plain = await page.screenshot();
        const bad = await page.screenshot({ path: "shots/" }).then(() => "saved", (error) => error.message);
        return {
          shot: Buffer.from(shot).toString("base64"),
          jpegStart: Buffer.from(jpeg).subarray(0, 3).toString("hex"),
          pdf: Buffer.from(pdf).toString("base64"),
          plain: plain.byteLength > 0,
          bad,
        };
      }`,
    );
    const answer = await t.call("POST", "/functions/shooter", { body: { url: `${pages.base}/shoot` } });
    expect(answer.status).toBe(200);
    const body = answer.body as { shot: string; jpegStart: string; pdf: string; plain: boolean; bad: string };
    expect(body.jpegStart).toBe("ffd8ff");
    expect(body.plain).toBe(true);
    expect(body.bad).toBe(
      `page.screenshot({ path }) keeps the file as the run's artifact named after the path's last part. An artifact's name is a file name of 1 to 128 characters of [A-Za-z0-9._-], got ""`,
    );
    const runId = String(answer.headers.get("x-run-id"));
    const listed = ((await t.call("GET", `/runs/${runId}/artifacts`)).body as { items: { name: string; content_type: string }[] }).items;
    expect(listed.map((item) => [item.name, item.content_type])).toEqual([
      ["photo.jpg", "image/jpeg"],
      ["report.pdf", "application/pdf"],
      ["shot.png", "image/png"],
    ]);
    const shot = await artifact(runId, "shot.png");
    expect([shot.status, isPng(shot.bytes), shot.bytes.equals(Buffer.from(body.shot, "base64"))]).toEqual([200, true, true]);
    const pdf = await artifact(runId, "report.pdf");
    expect([pdf.status, pdf.bytes.subarray(0, 5).toString(), pdf.bytes.equals(Buffer.from(body.pdf, "base64"))]).toEqual([200, "%PDF-", true]);
    const { logs } = (await t.call("GET", `/runs/${runId}`)).body as { logs: string };
    expect(logs).toBe(
      "LOG [browserfn] saved shot.png as an artifact\nLOG [browserfn] saved photo.jpg as an artifact\nLOG [browserfn] saved report.pdf as an artifact\n",
    );
  }, 60_000);

  it("names artifacts.save in the error of a run that writes a file", async () => {
    await t.deploy(
      "writer",
      `import { writeFileSync } from "node:fs";
      export default async () => {
        writeFileSync("report.csv", "id,total\\n");
        return "written";
      }`,
    );
    const answer = await t.call("POST", "/functions/writer");
    expect(answer.status).toBe(500);
    const error = (answer.body as { error: { code: string; message: string } }).error;
    expect(error.code).toBe("function_error");
    expect(error.message).toBe(
      'A run cannot write files or start processes here: keep a file with `artifacts.save(name, data)` (import { artifacts } from "browserfn/runtime"; `page.screenshot({ path })` does so by itself). Original error: Access to this API has been restricted',
    );
  }, 60_000);

  it("names what to do instead when a run reads a file, or when a library's file-writing API is refused (Playwright's tracing)", async () => {
    await t.deploy(
      "reader",
      `import { readFileSync } from "node:fs";
      export default async () => readFileSync("/etc/hostname", "utf8");`,
    );
    const read = (await t.call("POST", "/functions/reader")).body as { error: { message: string } };
    expect(read.error.message).toMatch(/^A run cannot read files here \(it has only its own code\): pass data as parameters, keep it in the function's secrets, or fetch it\. Original error: /);
    await t.deploy(
      "tracer",
      `import { chromium } from "playwright";
      export default async () => {
        const browser = await chromium.launch();
        const context = await browser.newContext();
        await context.tracing.start({ screenshots: true });
        return "traced";
      }`,
    );
    const traced = (await t.call("POST", "/functions/tracer")).body as { error: { message: string } };
    expect(traced.error.message).toMatch(/^A run cannot write files here, so this API cannot: downloads are kept as artifacts by themselves .*Original error: .*Access to this API has been restricted/);
  }, 60_000);
});

describe("page.screenshot({ path }) where the process may write files (as on AWS Lambda)", () => {
  it("keeps the file as an artifact, not in /tmp, where it would be lost with the run", async () => {
    const [browser, pages] = await Promise.all([launchTestBrowser(), startPageServer()]);
    try {
      const file = path.join(tmpdir(), `browserfn-shot-${process.pid}-${Date.now()}.png`);
      const { js, variables, parameter_style } = compileCode(`import { Session } from "browserfn/runtime";
        export default async (url: string, file: string) => {
          await using session = await Session.start();
          const page = await session.newPage();
          await page.goto(url);
          return (await page.screenshot({ path: file })).byteLength;
        }`);
      const saved: { name: string; contentType: string; bytes: number }[] = [];
      const sink = {
        async save(name: string, data: Uint8Array, contentType: string) {
          saved.push({ name, contentType, bytes: data.byteLength });
          return { name, url: `https://example.invalid/${name}`, bytes: data.byteLength };
        },
      };
      const outcome = await runInvocation({ code: js, params: { url: `${pages.base}/lambda`, file }, style: parameter_style, variables, getBrowser: async () => browser, timeoutMs: 20_000, artifacts: sink });
      expect(outcome).toMatchObject({ status: "succeeded", logs: `LOG [browserfn] saved ${path.basename(file)} as an artifact\n` });
      const bytes = JSON.parse(outcome.status === "succeeded" ? outcome.result_json : "null") as number;
      expect(saved).toEqual([{ name: path.basename(file), contentType: "image/png", bytes }]);
      expect(existsSync(file)).toBe(false);
    } finally {
      await browser.close();
      await pages.close();
    }
  }, 60_000);
});
