/**
 * `npx tsx bench/profileGotoParts.ts`: what each part of a profile's lazy restore adds to the
 * `goto` of the site's first document (issue #24, docs/benchmarks.md), without the service. One
 * Chromium (launched as the tests launch it), puppeteer-core, a fresh context and page per round,
 * then the `goto` timed, with only:
 *   - `plain`: nothing;
 *   - `script`: a script of every new document that carries the ~100 KB state (as the restore's
 *     does) and returns early (no mark);
 *   - `fetch`: the main document's response paused (Fetch, response stage) and continued with a
 *     `Server-Timing` header added, as the restore marks its document;
 *   - `binding`: a second CDP session with Runtime on and a binding added;
 *   - `full`: the real lazy restore (sessionProfile's loadProfile, the page armed by `seed`), the
 *     state checked restored after the timing.
 * Interleaved rounds, 300 ms apart; p50 ms.
 */
import type { Browser, Page } from "puppeteer-core";
import type { BrowserState } from "../layers/runtime/browserState/browserState";
import { puppeteerStateContext } from "../layers/runtime/browserState/puppeteerOrigins";
import { loadProfile } from "../layers/runtime/sessionProfile";
import { launchTestBrowser } from "../test/helpers/testBrowser";
import { startLoginSite } from "../test/helpers/loginSite";
import { round, summary } from "./stats";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const KEEP_NAMES = "globalThis.__name = (fn) => fn;";
const value = "x".repeat(1000);
const saved = Object.fromEntries([["http://x", { localStorage: Array.from({ length: 100 }, (_, i) => [`k${i}`, value]), indexedDB: [] }]]);
const text = JSON.stringify(JSON.stringify(saved));
const SCRIPT = `(() => { const entry = performance.getEntriesByType("navigation")[0];
  if (!entry || !Array.prototype.some.call(entry.serverTiming || [], (t) => t.name === "nomark")) return;
  const all = JSON.parse(${text}); })();`;

type Variant = (browser: Browser, page: Page) => Promise<void>;
const variants: Record<string, Variant | "full"> = {
  plain: async () => undefined,
  script: async (_b, page) => void (await page.evaluateOnNewDocument(SCRIPT)),
  fetch: async (_b, page) => {
    const cdp = await page.createCDPSession();
    cdp.on("Fetch.requestPaused", (e: { requestId: string; responseStatusCode?: number; responseHeaders?: Array<{ name: string; value: string }> }) => void cdp.send("Fetch.continueResponse", { requestId: e.requestId, responseCode: e.responseStatusCode, responseHeaders: [...(e.responseHeaders ?? []), { name: "Server-Timing", value: "m" }] }).catch(() => undefined));
    await cdp.send("Fetch.enable", { patterns: [{ resourceType: "Document", requestStage: "Response" }] });
  },
  binding: async (_b, page) => {
    const cdp = await page.createCDPSession();
    await Promise.all([cdp.send("Runtime.enable"), cdp.send("Runtime.addBinding", { name: "__b" })]);
  },
  full: "full",
};

async function main() {
  const site = await startLoginSite();
  const browser = await launchTestBrowser();
  const state: BrowserState = {
    cookies: [],
    origins: [{ origin: site.url, localStorage: Array.from({ length: 100 }, (_, i) => [`k${i}`, value] as [string, string]), indexedDB: [] }],
  };
  const url = `${site.url}/account`;
  const results: Record<string, number[]> = {};
  for (let i = -2; i < ROUNDS; i++) {
    for (const [name, variant] of Object.entries(variants)) {
      await sleep(300);
      const context = await browser.createBrowserContext();
      const newPage = async () => {
        const page = await context.newPage();
        await page.evaluateOnNewDocument(KEEP_NAMES);
        return page;
      };
      const page = await newPage();
      if (variant === "full") {
        const opened = await loadProfile(puppeteerStateContext(browser, context, newPage), { open: async () => new Uint8Array(), save: async () => undefined }, "b", state, false);
        await opened.seed(page);
      } else await variant(browser, page);
      const t0 = performance.now();
      await page.goto(url);
      const ms = performance.now() - t0;
      if (variant === "full" && (await page.evaluate(() => (localStorage.getItem("k0") ?? "").length)) !== 1000) throw new Error("not restored");
      await context.close();
      if (i >= 0) (results[name] ??= []).push(ms);
    }
  }
  const plain = summary(results.plain ?? []).p50;
  for (const [name, ms] of Object.entries(results)) console.log(`${name}: goto p50 ${round(summary(ms).p50)} ms (${name === "plain" ? "" : "+"}${name === "plain" ? "baseline" : round(summary(ms).p50 - plain)})`);
  console.log(`(${ROUNDS} rounds each, interleaved)`);
  await browser.close();
  await site.close();
}
void main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
