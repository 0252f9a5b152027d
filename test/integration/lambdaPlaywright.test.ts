import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { compileCode } from "../../lambdas/code/compileCode";
import { createLambdaHandler, type LambdaRunHandler } from "../../lambdas/runner/lambdaHandler";
import { launchPipeChromium } from "../../lambdas/runner/lambdaBrowser";
import type { FunctionMeta, LambdaRunEvent } from "../../lambdas/runner/lambdaPackage";
import { sparticuzChromium, startPageServer, type PageServer } from "../helpers/testBrowser";

/**
 * The Lambda runner's handler in this process, on the bundled Chromium launched as on Lambda
 * (one CDP pipe, both drivers): the Playwright driver and scripts as they are, warm across
 * invocations of one container.
 */

let root: string;
let pages: PageServer;
const handlers: LambdaRunHandler[] = [];

beforeAll(async () => {
  [root, pages] = await Promise.all([mkdtemp(path.join(tmpdir(), "browserfn-lambda-pw-")), startPageServer()]);
});

afterAll(async () => {
  await Promise.all(handlers.splice(0).map((handler) => handler.close()));
  await pages?.close();
  await rm(root, { recursive: true, force: true });
});

async function handlerFor(source: string): Promise<LambdaRunHandler> {
  const compiled = compileCode(source);
  const dir = await mkdtemp(path.join(root, "fn-"));
  const meta: FunctionMeta = { parameter_style: compiled.parameter_style, variables: compiled.variables };
  await writeFile(path.join(dir, "code.cjs"), compiled.js);
  await writeFile(path.join(dir, "meta.json"), JSON.stringify(meta));
  const chromium = await sparticuzChromium();
  const args = chromium.args.filter((arg) => arg !== "--single-process" && arg !== "--disable-web-security");
  const handler = createLambdaHandler(dir, { launchBrowser: () => launchPipeChromium(chromium.executablePath, args, path.join(dir, "downloads")) });
  handlers.push(handler);
  return handler;
}

const event = (params: Record<string, unknown>): LambdaRunEvent => ({ run_id: "run_1", params, timeout_ms: 20_000 });

it("runs the Playwright driver, an unchanged Playwright script and an unchanged Puppeteer script on one warm browser", async () => {
  const handler = await handlerFor(`import { Session } from "browserfn/runtime";
import { chromium } from "playwright";
import puppeteer from "puppeteer-core";
export default async function run(url: string) {
  await using session = await Session.start({ driver: "playwright" });
  const page = await session.newPage();
  await page.goto(url + "/driver");
  const browser = await chromium.launch({ headless: false, args: ["--x"] });
  const scripted = await browser.newPage();
  await scripted.goto(url + "/script");
  const pptr = await puppeteer.launch({ executablePath: "/x" });
  const pptrPage = await pptr.newPage();
  await pptrPage.goto(url + "/pptr");
  const titles = [await page.title(), await scripted.title(), await pptrPage.title()];
  await browser.close();
  await pptr.close();
  return { titles, driver: await page.locator("p").textContent(), version: session.context.browser()?.version() };
}`);
  for (const round of [1, 2]) {
    const answer = (await handler(event({ url: pages.base }))) as { status: string; result_json?: string; error?: unknown };
    expect({ round, status: answer.status, error: answer.error }).toEqual({ round, status: "succeeded", error: undefined });
    expect(JSON.parse(String(answer.result_json))).toEqual({ titles: ["Hello /driver", "Hello /script", "Hello /pptr"], driver: "no cookie", version: expect.stringMatching(/^153\./) });
  }
}, 90_000);
