/**
 * `npx tsx bench/workerReuse.ts`: what a run pays now that its worker process (and browser) is
 * replaced after every answer (issue #26, docs/benchmarks.md "Hostile tenants (issue #26)").
 * Side by side in one run, one function version, one worker: calls spaced so that the
 * replacement is ready before the next call ("spaced"), calls back to back (the next call waits
 * for the replacement), and a cold call (a new sandbox), for a browser function and a
 * no-browser one. Run against an older checkout, the same figures show what reuse saved.
 */
import { startPageServer } from "../test/helpers/pageServer";
import { TITLE_FN } from "../test/helpers/code";
import { startBenchService } from "./benchService";
import { round, summary, timed } from "./stats";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
/** The pause before each spaced call: longer than a replacement takes on a loaded machine. */
const GAP_MS = Number(process.env.BENCH_GAP_MS ?? 3000);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  const service = await startBenchService("process", "tests");
  const pages = await startPageServer();
  const call = async (name: string, body: unknown): Promise<number> => {
    let status = 0;
    const ms = await timed(async () => {
      const response = await fetch(`${service.url}/functions/${name}`, { method: "POST", headers: { authorization: `Bearer ${service.key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
      status = response.status;
      await response.arrayBuffer();
    });
    if (status !== 200) throw new Error(`${name}: ${status}`);
    return ms;
  };
  const deploy = async (name: string, code: string) => {
    const response = await fetch(`${service.url}/functions`, { method: "POST", headers: { authorization: `Bearer ${service.key}`, "content-type": "application/json" }, body: JSON.stringify({ name, code }) });
    if (response.status !== 201) throw new Error(`deploy ${name}: ${response.status}`);
  };
  try {
    console.log(service.sandbox.line);
    const cases = [
      { name: "title", code: TITLE_FN, body: { url: `${pages.url}/bench` } },
      { name: "nobrowser", code: "export default async (n: number = 1) => n + 1;", body: { n: 1 } },
    ];
    for (const { name, code, body } of cases) {
      await deploy(name, code);
      const cold = await call(name, body);
      const spaced: number[] = [];
      const backToBack: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        await sleep(GAP_MS);
        spaced.push(await call(name, body));
        backToBack.push(await call(name, body));
      }
      const s = summary(spaced);
      const b = summary(backToBack);
      console.log(`${name}: cold ${round(cold)} ms; spaced p50 ${round(s.p50)} p95 ${round(s.p95)} ms; back to back p50 ${round(b.p50)} p95 ${round(b.p95)} ms (${ROUNDS} each, interleaved)`);
    }
  } finally {
    await pages.close();
    await service.close();
  }
}

void main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
