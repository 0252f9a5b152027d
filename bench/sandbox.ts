/**
 * `npm run bench:sandbox`: what each sandbox costs a worker, side by side in one run, in
 * rounds that alternate the kinds so that the machine's state weighs on each alike:
 *
 * - start: a worker's sandbox started until its worker is ready (frozen, to take a run);
 * - first run: a no-browser run on that fresh worker, and a run that starts its browser;
 * - warm run: a no-browser run on a warm worker (thaw, run, reset, freeze), and a browser run
 *   (a context, a page, setContent, title) on its warm browser.
 *
 * Kinds: `process`; `namespaces` sharing the host's network (BROWSERFN_ALLOW_LOCAL_NETWORK);
 * `namespaces` with its own network (slirp4netns and the routes). See docs/benchmarks.md.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { compileCode } from "../lambdas/code/compileCode";
import { hostStarter } from "../lambdas/runtime/local/localRuntime";
import { runWithLimits } from "../lambdas/runtime/local/runWithLimits";
import { prepareRuntimeFiles } from "../lambdas/runtime/local/sandbox/runtimeFiles";
import { type Sandbox, chooseSandbox } from "../lambdas/runtime/local/sandbox/sandbox";
import type { RuntimeFiles } from "../lambdas/runtime/local/sandbox/sandboxedHost";
import { WorkerProcess } from "../lambdas/runtime/local/workerProcess";
import { summary, timed } from "./stats";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const WARM_RUNS = 50;
const WARM_BROWSER_RUNS = 10;
const CODE = `import { Session } from "browserfn/runtime";
export default async function run(browser: boolean = false) {
  if (!browser) return 1;
  await using session = await Session.start();
  const page = await session.newPage();
  await page.setContent("<title>t</title>");
  return await page.title();
}`;

interface Kind {
  name: string;
  sandbox: Sandbox;
  files: RuntimeFiles;
}

async function measure(kind: Kind, compiled: ReturnType<typeof compileCode>, runId: () => string) {
  const limits = { timeoutMs: 30_000, memoryMb: 2048 };
  const init = { code: compiled.js, parameter_style: compiled.parameter_style, variables: compiled.variables };
  let worker: WorkerProcess | undefined;
  /** Time to the run's answer (what a caller waits for); then the worker's turn is awaited, untimed. */
  const run = async (browser: boolean): Promise<number> => {
    const started = performance.now();
    const turn = await runWithLimits(worker as WorkerProcess, runId(), { browser }, limits);
    const answered = performance.now() - started;
    if (turn.result.status !== "succeeded") throw new Error(`${kind.name}: ${JSON.stringify(turn.result.error)}`);
    if (!(await turn.finished)) throw new Error(`${kind.name}: the worker was not reusable`);
    return answered;
  };
  try {
    const start = await timed(async () => (worker = await WorkerProcess.start({ startHost: hostStarter(kind.sandbox, kind.files, limits.memoryMb), init })));
    const firstRun = await run(false);
    const firstBrowserRun = await run(true);
    const warm: number[] = [];
    for (let i = 0; i < WARM_RUNS; i++) warm.push(await run(false));
    const warmBrowser: number[] = [];
    for (let i = 0; i < WARM_BROWSER_RUNS; i++) warmBrowser.push(await run(true));
    return { start, firstRun, firstBrowserRun, warm, warmBrowser };
  } finally {
    await worker?.kill("bench done");
  }
}

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), "browserfn-bench-sandbox-"));
  try {
    const shared = await prepareRuntimeFiles(dir, true);
    const ownNetworkDir = await mkdtemp(path.join(tmpdir(), "browserfn-bench-sandbox-"));
    const own = await prepareRuntimeFiles(ownNetworkDir, false);
    const kinds: Kind[] = [
      { name: "process", sandbox: await chooseSandbox("process", true), files: shared },
      { name: "namespaces, host network", sandbox: await chooseSandbox("namespaces", true), files: shared },
      { name: "namespaces, own network", sandbox: await chooseSandbox("namespaces", false), files: own },
    ];
    const compiled = compileCode(CODE);
    let n = 0;
    const runId = () => `run_bench${++n}`;
    const results = new Map(
      kinds.map((kind) => [kind.name, { start: [] as number[], firstRun: [] as number[], firstBrowserRun: [] as number[], warm: [] as number[], warmBrowser: [] as number[] }]),
    );
    await measure(kinds[0] as Kind, compiled, runId); // unpacks Chromium, warms the page cache
    for (let round = 0; round < ROUNDS; round++) {
      for (const kind of kinds) {
        const one = await measure(kind, compiled, runId);
        const into = results.get(kind.name);
        into?.start.push(one.start);
        into?.firstRun.push(one.firstRun);
        into?.firstBrowserRun.push(one.firstBrowserRun);
        into?.warm.push(...one.warm);
        into?.warmBrowser.push(...one.warmBrowser);
      }
    }
    const report = Object.fromEntries(
      [...results].map(([name, r]) => [
        name,
        {
          sandbox_start_ms: summary(r.start),
          first_run_ms: summary(r.firstRun),
          first_browser_run_ms: summary(r.firstBrowserRun),
          warm_run_ms: summary(r.warm),
          warm_browser_run_ms: summary(r.warmBrowser),
        },
      ]),
    );
    console.log(JSON.stringify({ rounds: ROUNDS, warm_runs_per_round: WARM_RUNS, ...report }, null, 2));
    await rm(ownNetworkDir, { recursive: true, force: true });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
