/**
 * `npx tsx bench/profileSteps.ts`: where a profile's restore and save spend their time, per
 * driver, without the service (docs/benchmarks.md "Profiles and proxies"). One Chromium (the
 * bundled @sparticuz/chromium, launched as the tests launch it), driven by puppeteer-core and by
 * Playwright over CDP; each round: a fresh context, its cookies in, the first page opened and
 * armed for the lazy restore of the ~100 KB state of bench/profiles.ts, a `goto` of the site (the
 * restore happens in it: checked after, outside the total), the save's read, the context
 * closed; the same without a profile beside it. Spaced rounds, interleaved.
 */
import { chromium } from "playwright-core";
import type { BrowserState } from "../layers/runtime/browserState/browserState";
import { playwrightStateContext } from "../layers/runtime/browserState/playwrightOrigins";
import { puppeteerStateContext } from "../layers/runtime/browserState/puppeteerOrigins";
import type { StateContext } from "../layers/runtime/browserState/stateContext";
import { loadProfile } from "../layers/runtime/sessionProfile";
import { launchTestBrowser } from "../test/helpers/testBrowser";
import { startLoginSite } from "../test/helpers/loginSite";
import { round, summary } from "./stats";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const GAP_MS = Number(process.env.BENCH_GAP_MS ?? 300);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * tsx compiles with esbuild's keepNames, so the page functions of the state layer call `__name`
 * (the service's bundles do not): defined in each document, for plain and profiled pages alike.
 */
const KEEP_NAMES = "globalThis.__name = (fn) => fn;";

type Steps = Record<string, number>;
interface DriverSession {
  context: StateContext;
  newPage(): Promise<{ goto(url: string): Promise<unknown>; evaluate(fn: () => unknown): Promise<unknown> }>;
  close(): Promise<void>;
}

/** One round: each step's milliseconds (`profile` false: the same steps with no profile work). */
async function round1(open: () => Promise<DriverSession>, state: BrowserState, url: string, profile: boolean): Promise<Steps> {
  const steps: Steps = {};
  let mark = performance.now();
  const step = (name: string) => {
    const now = performance.now();
    steps[name] = now - mark;
    mark = now;
  };
  const session = await open();
  step("context");
  const saves: number[] = [];
  const opened = profile ? await loadProfile(session.context, { open: async () => new Uint8Array(), save: async (_name, bytes) => void saves.push(bytes.byteLength) }, "bench", state, true) : undefined;
  step("cookies");
  const page = await session.newPage();
  step("newPage");
  await opened?.seed(page);
  step("arm");
  await page.goto(url);
  step("goto");
  if (profile) {
    // The restore happened in the goto (lazily): checked outside the steps' total.
    const restored = await (page as unknown as { evaluate(fn: () => unknown): Promise<unknown> }).evaluate(() => (localStorage.getItem("k0") ?? "").length);
    if (restored !== 1000) throw new Error(`the profile's storage was not restored: ${String(restored)}`);
    step(" check");
  }
  await opened?.save();
  step("save");
  await session.close();
  step("close");
  return steps;
}

async function main(): Promise<void> {
  const site = await startLoginSite();
  const browser = await launchTestBrowser();
  const wsEndpoint = browser.wsEndpoint();
  const pw = await chromium.connectOverCDP(wsEndpoint);
  const value = "x".repeat(1000);
  const state: BrowserState = {
    cookies: [{ name: "sid", value: "sid-4f2a9c", domain: "127.0.0.1", path: "/", httpOnly: true, secure: false, expires: Math.floor(Date.now() / 1000) + 3600 }],
    origins: [{ origin: site.url, localStorage: Array.from({ length: 100 }, (_, i) => [`k${i}`, value] as [string, string]), indexedDB: [{ name: "app", version: 1, stores: [{ name: "kv", keyPath: null, autoIncrement: false, indexes: [], records: [{ key: "token", value: "token-42" }] }] }] }],
  };
  const drivers: Record<string, () => Promise<DriverSession>> = {
    puppeteer: async () => {
      const context = await browser.createBrowserContext();
      const newPage = async () => {
        const page = await context.newPage();
        await page.evaluateOnNewDocument(KEEP_NAMES);
        return page;
      };
      return { context: puppeteerStateContext(browser, context, newPage), newPage, close: () => context.close() };
    },
    playwright: async () => {
      const context = await pw.newContext({ viewport: null });
      await context.addInitScript(KEEP_NAMES);
      return { context: playwrightStateContext(context), newPage: () => context.newPage(), close: () => context.close() };
    },
  };
  const url = `${site.url}/account`;
  const results: Record<string, Steps[]> = {};
  try {
    for (let i = -2; i < ROUNDS; i++) {
      for (const [driver, open] of Object.entries(drivers)) {
        for (const profile of [false, true]) {
          await sleep(GAP_MS);
          const steps = await round1(open, state, url, profile);
          if (i >= 0) (results[`${driver}${profile ? " profiled" : " plain"}`] ??= []).push(steps);
        }
      }
    }
    for (const [name, rounds] of Object.entries(results)) {
      const keys = Object.keys(rounds.at(-1) as Steps);
      const total = summary(rounds.map((steps) => Object.entries(steps).reduce((sum, [key, ms]) => (key.startsWith(" ") ? sum : sum + ms), 0)));
      console.log(`${name}: total p50 ${total.p50} ms; ` + keys.map((key) => `${key} ${round(summary(rounds.map((steps) => steps[key] ?? 0)).p50)}`).join(", "));
    }
    console.log(`(${ROUNDS} rounds each, interleaved, ${GAP_MS} ms apart; step p50s in ms)`);
  } finally {
    await pw.close();
    await browser.close();
    await site.close();
  }
}

void main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
