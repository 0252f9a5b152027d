/**
 * `npm run bench`: invocation latency, throughput and memory of the local service, each
 * measured against a baseline side by side in the same run (see docs/benchmarks.md):
 *
 * 1. warm browser invoke of a title-reading function vs raw puppeteer-core doing the same work
 *    (fresh context + page + goto + title + close) on a warm browser in this process;
 * 2. a no-browser function: latency p50/p95 vs an HTTP floor, and throughput at concurrency 8
 *    vs the HTTP floor's;
 * 3. the cold first invoke of a new function (worker start + browser launch);
 * 4. browser throughput at concurrency 4 vs raw puppeteer with 4 contexts on one browser;
 * 5. the memory (PSS) of the service's process tree before the runs and after them;
 * 6. where the CPU goes in 4 and 5: per call, the service's tree by part against raw puppeteer's;
 * 7. start-up (bench/startup.ts): the service's start to GET /health 200 and `browserfn list --json`
 *    through the bin, each beside `node -e 0`, measured first, before anything else runs;
 * 8. then (unless BENCH_HOSTILE=0) the hostile tenants of issue #26, each against the idle
 *    service (bench/hostile.ts: a hostile deploy, a poisoned webhook, a body flood).
 */
import { spawn } from "node:child_process";
import puppeteer from "puppeteer-core";
import { chromiumArgs, chromiumFiles } from "../lambdas/runtime/local/sandbox/chromium";
import { startPageServer } from "../test/helpers/pageServer";
import { TITLE_FN } from "../test/helpers/code";
import { startBenchService, startHttpFloor } from "./benchService";
import { readTreeMemory } from "./processMemory";
import { round, summary, timed } from "./stats";
import { load, throughputSideBySide } from "./throughput";
import { msPerCall, ownCpuMs, perCall, readTreeCpu } from "./processCpu";
import { measureStartup, startupTable } from "./startup";
import { releaseToStart } from "./runQueue";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 60);
/** How long each throughput figure is loaded (its baseline as long, side by side). */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
/**
 * No-browser calls before the timed ones: a new code path of the service runs slower for its
 * first few hundred calls, until V8 has optimized it (docs/benchmarks.md).
 */
const NO_BROWSER_WARM_UP = 300;
/** `process` (default): the service in its own process, as `npm start` runs it; `inline`: in this one. */
const SERVICE = process.env.BENCH_SERVICE === "inline" ? "inline" : "process";
/** `defaults` (default): `npm start`'s worker caps; `tests`: 2 per function, 4 in all. */
const WORKERS = process.env.BENCH_WORKERS === "tests" ? "tests" : "defaults";
/** Callers of the browser throughput, and of the no-browser one. */
const BROWSER_CALLERS = 4;
const NO_BROWSER_CALLERS = 8;
/** Rounds of the start-up figures. */
const START_RUNS = Number(process.env.BENCH_START_RUNS ?? 5);

async function main(): Promise<void> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
  const startup = await measureStartup(START_RUNS);
  console.log(startupTable(startup));
  const service = await startBenchService(SERVICE, WORKERS);
  const { key } = service;
  // Before anything else reaches the service: dynalite and whatever it starts by itself.
  const memoryBefore = service.pid === null ? null : await readTreeMemory(service.pid);
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

    let n = 0;
    const noop = () => call("POST", "/functions/noop", { n: n++ });
    const floorCall = () => call("POST", "/floor", { n: n++ }, floor.url);
    for (let i = 0; i < NO_BROWSER_WARM_UP; i++) {
      await noop();
      await floorCall();
    }
    const noopTimes: number[] = [];
    const floorTimes: number[] = [];
    for (let i = 0; i < ROUNDS * 4; i++) {
      floorTimes.push(await timed(floorCall));
      noopTimes.push(await timed(noop));
    }
    const noopSummary = summary(noopTimes);
    const floorSummary = summary(floorTimes);

    const noBrowserThroughput = await throughputSideBySide(NO_BROWSER_CALLERS, SECONDS, noop, floorCall);

    await call("POST", "/functions", { name: "cold", code: TITLE_FN });
    const cold = await timed(() => call("POST", "/functions/cold", { url: pageUrl }));

    // Each caller's first calls start the workers (and browsers) the pool allows, and contexts in the raw browser.
    await Promise.all(Array.from({ length: BROWSER_CALLERS }, async () => {
      for (let i = 0; i < 3; i++) {
        await invoke();
        await raw();
      }
    }));
    const browserThroughput = await throughputSideBySide(BROWSER_CALLERS, SECONDS, invoke, raw);
    const browserCpu = service.pid === null ? null : await cpuSideBySide(service.pid, browser.process()?.pid ?? 0, invoke, raw);

    // Workers reset their browsers after answering: that is over after a moment.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const memoryAfter = service.pid === null ? null : await readTreeMemory(service.pid);

    const result = {
      rounds: ROUNDS,
      service: SERVICE,
      sandbox: service.sandbox.mode,
      sandbox_line: service.sandbox.line,
      workers: WORKERS,
      worker_caps: { per_function: service.workers.perFunction, total: service.workers.total },
      warm_browser_invoke_ms: invokeSummary,
      raw_puppeteer_floor_ms: rawSummary,
      warm_vs_raw_p50_ratio: round(invokeSummary.p50 / rawSummary.p50),
      no_browser_invoke_ms: noopSummary,
      http_floor_ms: floorSummary,
      no_browser_over_http_floor_p50_ms: round(noopSummary.p50 - floorSummary.p50),
      throughput_seconds: SECONDS,
      no_browser_throughput_per_s_at_concurrency_8: round(noBrowserThroughput.a),
      http_floor_throughput_per_s_at_concurrency_8: round(noBrowserThroughput.b),
      cold_first_invoke_ms: round(cold),
      browser_throughput_per_s_at_concurrency_4: round(browserThroughput.a),
      raw_puppeteer_throughput_per_s_at_concurrency_4: round(browserThroughput.b),
      browser_vs_raw_throughput_ratio: round(browserThroughput.a / browserThroughput.b),
      cpu_ms_per_browser_call_at_concurrency_4: browserCpu,
      service_memory_before_runs: memoryBefore,
      service_memory_after_runs: memoryAfter,
      startup,
      // Issue #27's figures as ratios to their baselines of this same run.
      no_browser_over_http_floor_p50_ratio: round(noopSummary.p50 / floorSummary.p50),
      no_browser_vs_http_floor_throughput_ratio: round(noBrowserThroughput.a / noBrowserThroughput.b),
      cold_over_warm_browser_p50_ratio: round(cold / invokeSummary.p50),
      ...(process.env.BENCH_QUEUE === "0" ? {} : await releaseToStart()),
    };
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await browser.close();
    await pages.close();
    await floor.close();
    await service.close();
  }
}

/**
 * CPU ms per call at the browser throughput's concurrency, loaded half of SECONDS each: the
 * service's process tree by part (the service, dynalite, workers, their hosts, browsers) and the
 * bench's own process (the HTTP client), against raw puppeteer's browser and the bench's process
 * (puppeteer's client). Read from /proc: a part's CPU is what its processes used (and reaped).
 */
async function cpuSideBySide(servicePid: number, browserPid: number, invoke: () => Promise<unknown>, raw: () => Promise<unknown>) {
  const measure = async (root: number, work: () => Promise<unknown>): Promise<Record<string, number>> => {
    const [tree, own] = [readTreeCpu(root), ownCpuMs()];
    const { calls } = await load(BROWSER_CALLERS, SECONDS / 2, work);
    return { ...perCall(tree, readTreeCpu(root), calls), bench_process: msPerCall(ownCpuMs() - own, calls) };
  };
  const total = (parts: Record<string, number | undefined>) => round(Object.values(parts).reduce<number>((sum, ms) => sum + (ms ?? 0), 0));
  const service = await measure(servicePid, invoke);
  // Every process of raw puppeteer's tree is its browser's (the root is the browser itself).
  const { bench_process, ...browserParts } = await measure(browserPid, raw);
  const browser = total(browserParts);
  return { service: { ...service, total: total(service) }, raw: { browser, bench_process, total: total({ browser, bench_process }) } };
}

/** bench/hostile.ts in a process of its own (after this bench's service is gone), its output as it goes. */
function hostileTenants(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [require.resolve("tsx/cli"), `${__dirname}/hostile.ts`], { stdio: "inherit" });
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`bench/hostile.ts exited ${code}`))));
  });
}

main()
  .then(() => (process.env.BENCH_HOSTILE === "0" ? undefined : hostileTenants()))
  .catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
