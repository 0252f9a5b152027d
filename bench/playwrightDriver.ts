/**
 * `npx tsx bench/playwrightDriver.ts`: the Playwright driver on a warm invoke against raw
 * Playwright driving the same Chromium build (the bundled @sparticuz/chromium 153, launched by
 * playwright-core's own `chromium.launch`) in the same run, interleaved round by round (issue
 * #24, docs/benchmarks.md "Playwright driver"). Each side does the same work: a fresh context,
 * a page, `goto` a local page, read its title, close the context. The driver's figure is timed
 * inside the run (the function returns it), so that it compares the drivers and not the HTTP
 * path; the whole invoke is reported beside it.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { chromium } from "playwright-core";
import { startPageServer } from "../test/helpers/pageServer";
import { startBenchService } from "./benchService";
import { round, summary, timed } from "./stats";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
/** The pause before each call: the worker replaced after the previous run is warm again by then. */
const GAP_MS = Number(process.env.BENCH_GAP_MS ?? 3000);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const DRIVER_FN = `import { Session } from "browserfn/runtime";
export default async function run(url: string) {
  const started = performance.now();
  const session = await Session.start({ driver: "playwright" });
  const page = await session.newPage();
  await page.goto(url);
  const title = await page.title();
  await session.close();
  return { title, ms: performance.now() - started };
}`;

async function sparticuz(): Promise<{ executablePath: string; args: string[] }> {
  const script = `import c from "@sparticuz/chromium"; console.log(JSON.stringify({ executablePath: await c.executablePath(), args: c.args }));`;
  const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], { cwd: join(__dirname, "..") });
  return JSON.parse(stdout) as { executablePath: string; args: string[] };
}

async function main(): Promise<void> {
  const service = await startBenchService("process", "tests");
  const pages = await startPageServer();
  const binary = await sparticuz();
  const raw = await chromium.launch({ executablePath: binary.executablePath, args: binary.args.filter((arg) => arg !== "--single-process" && !arg.startsWith("--headless")), headless: true });
  const headers = { authorization: `Bearer ${service.key}`, "content-type": "application/json" };
  const url = `${pages.url}/bench`;
  try {
    console.log(service.sandbox.line, `raw: Chromium ${raw.version()}`);
    const deployed = await fetch(`${service.url}/functions`, { method: "POST", headers, body: JSON.stringify({ name: "pw", code: DRIVER_FN }) });
    if (deployed.status !== 201) throw new Error(`deploy: ${deployed.status}`);
    const invoke = async (): Promise<{ inRun: number; whole: number }> => {
      let inRun = 0;
      const whole = await timed(async () => {
        const response = await fetch(`${service.url}/functions/pw`, { method: "POST", headers, body: JSON.stringify({ url }) });
        if (response.status !== 200) throw new Error(`invoke: ${response.status} ${await response.text()}`);
        inRun = ((await response.json()) as { ms: number }).ms;
      });
      return { inRun, whole };
    };
    const rawRound = () =>
      timed(async () => {
        const context = await raw.newContext();
        const page = await context.newPage();
        await page.goto(url);
        await page.title();
        await context.close();
      });
    await invoke(); // cold: a new sandbox
    await rawRound();
    const driver: number[] = [];
    const wholes: number[] = [];
    const direct: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      await sleep(GAP_MS);
      // A B B A: neither side always goes first.
      if (i % 2 === 0) {
        const { inRun, whole } = await invoke();
        driver.push(inRun);
        wholes.push(whole);
        direct.push(await rawRound());
      } else {
        direct.push(await rawRound());
        const { inRun, whole } = await invoke();
        driver.push(inRun);
        wholes.push(whole);
      }
    }
    const d = summary(driver);
    const r = summary(direct);
    const w = summary(wholes);
    console.log(`Playwright driver, in the run: p50 ${round(d.p50)} p95 ${round(d.p95)} ms`);
    console.log(`raw Playwright, same Chromium: p50 ${round(r.p50)} p95 ${round(r.p95)} ms`);
    console.log(`ratio p50 ${(d.p50 / r.p50).toFixed(2)}x, p95 ${(d.p95 / r.p95).toFixed(2)}x (${ROUNDS} rounds, interleaved)`);
    console.log(`whole warm invoke over HTTP: p50 ${round(w.p50)} p95 ${round(w.p95)} ms`);
  } finally {
    await raw.close();
    await pages.close();
    await service.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
