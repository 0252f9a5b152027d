/**
 * `npm run bench`: invocation latency of the local service, measured against a baseline run
 * side by side in the same process (see docs/benchmarks.md for recorded results).
 *
 * 1. warm browser invoke of a title-reading function vs raw puppeteer-core doing the same work
 *    (fresh context + page + goto + title + close) on a warm browser in this process;
 * 2. a no-browser function: latency p50/p95, and throughput at concurrency 8;
 * 3. the cold first invoke of a new function (worker start + browser launch).
 */
import puppeteer from "puppeteer-core";
import { chromiumArgs, chromiumFiles } from "../lambdas/runtime/local/sandbox/chromium";
import { startPageServer } from "../test/helpers/pageServer";
import { TITLE_FN } from "../test/helpers/code";
import { startBenchService, startHttpFloor } from "./benchService";
import { round, summary, timed } from "./stats";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 60);
/**
 * No-browser calls before the timed ones: a new code path of the service runs slower for its
 * first few hundred calls, until V8 has optimized it (docs/benchmarks.md).
 */
const NO_BROWSER_WARM_UP = 300;
/** `process` (default): the service in its own process, as `npm start` runs it; `inline`: in this one. */
const SERVICE = process.env.BENCH_SERVICE === "inline" ? "inline" : "process";

async function main(): Promise<void> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
  const service = await startBenchService(SERVICE);
  const { key } = service;
  const pages = await startPageServer();
  const floor = await startHttpFloor();
  const call = async (method: string, urlPath: string, body?: unknown, base = service.url) => {
    const response = await fetch(base + urlPath, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${method} ${urlPath}: ${response.status} ${text}`);
    return text;
  };
  const browser = await puppeteer.launch({ executablePath: (await chromiumFiles()).executable, args: chromiumArgs() });
  try {
    await call("POST", "/functions", { name: "title", code: TITLE_FN });
    await call("POST", "/functions", { name: "noop", code: "export default async (n: number = 1) => ({ n });" });
    const pageUrl = `${pages.url}/title/Bench`;

    const raw = async () => {
      const context = await browser.createBrowserContext();
      try {
        const page = await context.newPage();
        await page.goto(pageUrl);
        await page.title();
      } finally {
        await context.close();
      }
    };
    const invoke = () => call("POST", "/functions/title", { url: pageUrl });
    for (let i = 0; i < 5; i++) {
      await raw();
      await invoke();
    }
    const rawTimes: number[] = [];
    const invokeTimes: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      rawTimes.push(await timed(raw));
      invokeTimes.push(await timed(invoke));
    }
    const rawSummary = summary(rawTimes);
    const invokeSummary = summary(invokeTimes);

    for (let i = 0; i < NO_BROWSER_WARM_UP; i++) {
      await call("POST", "/functions/noop", { n: i });
      await call("POST", "/floor", { n: i }, floor.url);
    }
    const noopTimes: number[] = [];
    const floorTimes: number[] = [];
    for (let i = 0; i < ROUNDS * 4; i++) {
      floorTimes.push(await timed(() => call("POST", "/floor", { n: i }, floor.url)));
      noopTimes.push(await timed(() => call("POST", "/functions/noop", { n: i })));
    }
    const noopSummary = summary(noopTimes);
    const floorSummary = summary(floorTimes);

    let completed = 0;
    const deadline = performance.now() + 5000;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (performance.now() < deadline) {
          await call("POST", "/functions/noop", { n: completed });
          completed++;
        }
      }),
    );
    const throughput = completed / ((performance.now() - started) / 1000);

    await call("POST", "/functions", { name: "cold", code: TITLE_FN });
    const cold = await timed(() => call("POST", "/functions/cold", { url: pageUrl }));

    const result = {
      rounds: ROUNDS,
      service: SERVICE,
      warm_browser_invoke_ms: invokeSummary,
      raw_puppeteer_floor_ms: rawSummary,
      warm_vs_raw_p50_ratio: round(invokeSummary.p50 / rawSummary.p50),
      no_browser_invoke_ms: noopSummary,
      http_floor_ms: floorSummary,
      no_browser_over_http_floor_p50_ms: round(noopSummary.p50 - floorSummary.p50),
      no_browser_throughput_per_s_at_concurrency_8: round(throughput),
      cold_first_invoke_ms: round(cold),
    };
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await browser.close();
    await pages.close();
    await floor.close();
    await service.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
