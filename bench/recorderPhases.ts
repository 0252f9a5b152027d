/**
 * `npx tsx bench/recorderPhases.ts`: where the recorder's cost goes on a warm browser, in the
 * browser alone (no service, no worker): one Chromium (the service's flags), a page of 2,000 DOM
 * nodes on 127.0.0.1, and per round, interleaved, `off` (newPage, goto, title, close) and
 * `recorded` (the same with the recorder's CDP session and set-up sent before goto, as the
 * runner does). Each phase timed on this side; p50 of BENCH_ROUNDS (default 20) rounds; with
 * BENCH_CLOSE=context each round's page is in a context of its own, closed with it.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Page } from "puppeteer-core";
import { recordPage } from "../lambdas/recording/pageRecorder";
import type { CdpChannel } from "../lambdas/recording/pageTarget";
import { launchTestBrowser } from "../test/helpers/testBrowser";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const rows = Array.from({ length: 200 }, (_, i) => `<li class="row"><span>item ${i}</span><a href="#${i}">link ${i}</a><em>${i * 7}</em></li>`).join("");
const PAGE = `<!doctype html><title>big</title><body><h1>2,000 nodes</h1><ul>${rows}</ul></body>`;
const p50 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

async function main(): Promise<void> {
  const server = createServer((_, response) => response.writeHead(200, { "content-type": "text/html" }).end(PAGE));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const browser = await launchTestBrowser();
  // BENCH_CLOSE=context: each round in a context of its own, closed whole (as a run's sessions are at its end).
  const byContext = process.env.BENCH_CLOSE === "context";
  const shared = byContext ? undefined : await browser.createBrowserContext();
  const phases: Record<string, number[]> = {};
  const add = (name: string, ms: number) => (phases[name] ??= []).push(ms);
  const run = async (recorded: boolean) => {
    const context = shared ?? (await browser.createBrowserContext());
    const t0 = performance.now();
    const page: Page = await context.newPage();
    const t1 = performance.now();
    add(`${recorded ? "recorded" : "off"}: newPage`, t1 - t0);
    let bytes = 0;
    if (recorded) {
      const session = await page.createCDPSession();
      const t2 = performance.now();
      add("recorded: CDP session (Target.attachToTarget)", t2 - t1);
      // As the runner does: the page goes on once the set-up is sent (see runRecording).
      await new Promise<void>((resolve, reject) => {
        recordPage(
          session as unknown as CdpChannel,
          (message) => {
            if ("batch" in message) bytes += message.batch.length;
          },
          resolve,
        ).catch(reject);
      });
      add("recorded: set-up (5 commands in one go, sent)", performance.now() - t2);
    }
    const t3 = performance.now();
    await page.goto(url);
    const t35 = performance.now();
    add(`${recorded ? "recorded" : "off"}: goto`, t35 - t3);
    await page.title();
    const t4 = performance.now();
    add(`${recorded ? "recorded" : "off"}: title`, t4 - t35);
    await (byContext ? context.close() : page.close());
    add(`${recorded ? "recorded" : "off"}: close`, performance.now() - t4);
    add(`${recorded ? "recorded" : "off"}: total`, performance.now() - t0);
    if (recorded) add("recorded: KB handed over (pagehide at close)", bytes / 1024);
  };
  for (let i = 0; i < 2; i++) await run(i % 2 === 0); // warm-up
  for (let i = 0; i < ROUNDS; i++) {
    await run(i % 2 === 0);
    await run(i % 2 !== 0);
  }
  for (const [name, values] of Object.entries(phases).sort()) console.log(`${name}: p50 ${p50(values).toFixed(1)}${name.includes("KB") ? "" : " ms"} (${values.length})`);
  await browser.close();
  server.close();
}

void main();
