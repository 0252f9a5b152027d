/**
 * `npx tsx bench/recordings.ts` (npm run bench:recordings): what the default `recording:
 * "failures"` costs a warm browser invoke of a run that succeeds (it records every page and
 * keeps nothing), against `recording: "off"` (issue #25, docs/benchmarks.md "Recordings").
 * Side by side in one run: for the bench's fixture page and for a page of 2,000 DOM nodes, one
 * function per setting, called in turns (off, failures, failures, off, …), each call spaced so
 * that its worker's replacement is ready (a warm invoke). Also: a run no one watches pays
 * nothing for the live view (no screencast starts), which the same `off` figures include.
 *
 * Besides the wall time, a figure the machine's load does not move: the CPU the service's
 * process tree (the service, the sandbox's host, the run's worker, Chromium) spends per call,
 * from just before the call to just before the next one (its end, the browser's reset and the
 * next worker's start included), read from /proc in 10 ms ticks.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { startPageServer } from "../test/helpers/pageServer";
import { TITLE_FN } from "../test/helpers/code";
import { startBenchService } from "./benchService";
import { readTreeCpu } from "./processCpu";
import { round, summary, timed } from "./stats";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 16);
const GAP_MS = Number(process.env.BENCH_GAP_MS ?? 2500);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A page of 2,000 DOM nodes: 200 rows of a list, each a few elements and text nodes. */
function bigPage(): string {
  const rows = Array.from({ length: 200 }, (_, i) => `<li class="row"><span>item ${i}</span><a href="#${i}">link ${i}</a><em>${i * 7}</em></li>`).join("");
  return `<!doctype html><title>big</title><body><h1>2,000 nodes</h1><ul>${rows}</ul></body>`;
}

async function main(): Promise<void> {
  const service = await startBenchService("process", "tests");
  const pages = await startPageServer();
  const big = createServer((_, response) => {
    response.writeHead(200, { "content-type": "text/html" });
    response.end(bigPage());
  });
  await new Promise<void>((resolve) => big.listen(0, "127.0.0.1", resolve));
  const bigUrl = `http://127.0.0.1:${(big.address() as AddressInfo).port}/big`;
  const headers = { authorization: `Bearer ${service.key}`, "content-type": "application/json" };
  const call = async (name: string, url: string): Promise<number> => {
    let status = 0;
    const ms = await timed(async () => {
      const response = await fetch(`${service.url}/functions/${name}`, { method: "POST", headers, body: JSON.stringify({ url }) });
      status = response.status;
      await response.arrayBuffer();
    });
    if (status !== 200) throw new Error(`${name}: ${status}`);
    return ms;
  };
  const deploy = async (name: string, recording: string) => {
    const response = await fetch(`${service.url}/functions`, { method: "POST", headers, body: JSON.stringify({ name, code: TITLE_FN, recording }) });
    if (response.status !== 201) throw new Error(`deploy ${name}: ${response.status} ${await response.text()}`);
  };
  try {
    console.log(service.sandbox.line);
    await deploy("rec-off", "off");
    await deploy("rec-failures", "failures");
    // BENCH_PAGES=fixture or =2000: only that page.
    const only = process.env.BENCH_PAGES;
    const benchPages = [
      ["fixture page", `${pages.url}/bench`],
      ["2,000-node page", bigUrl],
    ] as const;
    for (const [label, url] of benchPages.filter(([label]) => !only || label.startsWith(only === "2000" ? "2,000" : only))) {
      // Each worker started, and its browser warm, before anything is counted.
      for (const name of ["rec-off", "rec-failures"]) {
        await call(name, url);
        await sleep(GAP_MS);
        await call(name, url);
      }
      const off: number[] = [];
      const failures: number[] = [];
      const cpu = { "rec-off": [] as Cpu[], "rec-failures": [] as Cpu[] };
      let last: { name: keyof typeof cpu; at: Cpu } | undefined;
      /** Charges the CPU since the last call's start to that call; `name`'s call starts now. */
      const charge = (name?: keyof typeof cpu) => {
        const at = readCpu(service.pid);
        if (last) cpu[last.name].push(minus(at, last.at));
        last = name ? { name, at } : undefined;
      };
      for (let i = 0; i < ROUNDS; i++) {
        const order = i % 2 === 0 ? (["rec-off", "rec-failures"] as const) : (["rec-failures", "rec-off"] as const);
        for (const name of order) {
          await sleep(GAP_MS);
          charge(name);
          (name === "rec-off" ? off : failures).push(await call(name, url));
        }
      }
      await sleep(GAP_MS);
      charge();
      const o = summary(off);
      const f = summary(failures);
      console.log(
        `${label}: off p50 ${round(o.p50)} ms (mean ${round(o.mean)}); failures p50 ${round(f.p50)} ms (mean ${round(f.mean)}); ` +
          `failures/off p50 ${(f.p50 / o.p50).toFixed(3)}, mean ${(f.mean / o.mean).toFixed(3)} (${ROUNDS} each, interleaved)`,
      );
      const [co, cf] = [meanCpu(cpu["rec-off"]), meanCpu(cpu["rec-failures"])];
      console.log(
        `${label}: CPU of the service's tree per call, mean: off ${co.total} ms (browser ${co.browser}, sandbox ${co.sandbox}, service ${co.service}); ` +
          `failures ${cf.total} ms (browser ${cf.browser}, sandbox ${cf.sandbox}, service ${cf.service}); added ${round(cf.total - co.total)} ms`,
      );
    }
  } finally {
    big.close();
    await pages.close();
    await service.close();
  }
}

type Cpu = { total: number; browser: number; sandbox: number; service: number };

/** The service tree's CPU so far (ms), split as the report prints it; nothing without a child process. */
function readCpu(pid: number | null): Cpu {
  if (pid === null) return { total: 0, browser: 0, sandbox: 0, service: 0 };
  const parts = readTreeCpu(pid);
  const sandbox = parts.host + parts.worker + parts.other;
  return { total: parts.browser + sandbox + parts.service, browser: parts.browser, sandbox, service: parts.service };
}

function minus(a: Cpu, b: Cpu): Cpu {
  return { total: a.total - b.total, browser: a.browser - b.browser, sandbox: a.sandbox - b.sandbox, service: a.service - b.service };
}

function meanCpu(values: Cpu[]): Cpu {
  const mean = (pick: (value: Cpu) => number) => round(values.reduce((sum, value) => sum + pick(value), 0) / Math.max(1, values.length));
  return { total: mean((v) => v.total), browser: mean((v) => v.browser), sandbox: mean((v) => v.sandbox), service: mean((v) => v.service) };
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
