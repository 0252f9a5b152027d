/**
 * `npx tsx bench/recordings.ts` (npm run bench:recordings): what the default `recording:
 * "failures"` costs a warm browser invoke of a run that succeeds (it records every page and
 * keeps nothing), against `recording: "off"` (issue #25, docs/benchmarks.md "Recordings").
 * Side by side in one run: for the bench's fixture page and for a page of 2,000 DOM nodes, one
 * function per setting, called in turns (off, failures, failures, off, …), each call spaced so
 * that its worker's replacement is ready (a warm invoke). Also: a run no one watches pays
 * nothing for the live view (no screencast starts), which the same `off` figures include.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { startPageServer } from "../test/helpers/pageServer";
import { TITLE_FN } from "../test/helpers/code";
import { startBenchService } from "./benchService";
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
    for (const [label, url] of [
      ["fixture page", `${pages.url}/bench`],
      ["2,000-node page", bigUrl],
    ] as const) {
      // Each worker started, and its browser warm, before anything is counted.
      for (const name of ["rec-off", "rec-failures"]) {
        await call(name, url);
        await sleep(GAP_MS);
        await call(name, url);
      }
      const off: number[] = [];
      const failures: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const order = i % 2 === 0 ? (["rec-off", "rec-failures"] as const) : (["rec-failures", "rec-off"] as const);
        await sleep(GAP_MS);
        for (const name of order) (name === "rec-off" ? off : failures).push(await call(name, url));
      }
      const o = summary(off);
      const f = summary(failures);
      console.log(
        `${label}: off p50 ${round(o.p50)} ms (mean ${round(o.mean)}); failures p50 ${round(f.p50)} ms (mean ${round(f.mean)}); ` +
          `failures/off p50 ${(f.p50 / o.p50).toFixed(3)}, mean ${(f.mean / o.mean).toFixed(3)} (${ROUNDS} each, interleaved)`,
      );
    }
  } finally {
    big.close();
    await pages.close();
    await service.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
