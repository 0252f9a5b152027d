/**
 * `npm run bench:queue`: what the run queue (issue #22) costs and how fast it moves, side by
 * side in one run (docs/benchmarks.md, "Run queue (issue #22)"):
 *
 * 1. an uncontended no-browser invocation (p50/p95), on this code and on a baseline checkout
 *    of the code before the queue (BENCH_BASELINE_DIR: e.g. `git worktree add /tmp/base <commit>`
 *    with node_modules linked), each as `npm start` runs it, calls interleaved one by one;
 * 2. from a slot freeing to the next queued run starting: on a plan of one run at a time, a
 *    backlog of short runs queued with `Prefer: respond-async`; each gap is the time from one
 *    run leaving its automation to the next entering it (an upper bound of release → start:
 *    it also holds the end's answer, its record, and the next run's start in its worker).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { DEFAULT_PLANS } from "../lambdas/config/plans";
import { generateApiKey } from "../lambdas/identity/apiKeys";
import { round, summary, timed } from "./stats";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 300);
const WARM_UP = 300;
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 60);
const ROOT = path.resolve(__dirname, "..");

interface Service {
  url: string;
  key: string;
  child: ChildProcess;
  dataDir: string;
}

/** `bin/local.ts` of the checkout at `root`, in a process of its own, as `npm start` runs it. */
async function startService(root: string, env: Record<string, string>): Promise<Service> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "browserfn-bench-queue-"));
  const key = generateApiKey();
  const child = spawn(process.execPath, ["--require", "tsx/cjs", "bin/local.ts"], {
    cwd: root,
    env: { ...process.env, PORT: "0", BROWSERFN_DATA_DIR: dataDir, BROWSERFN_BOOTSTRAP_KEY: key, BROWSERFN_REQUEST_LOG: "0", BROWSERFN_RATE_LIMIT_PER_SECOND: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk) => (output += chunk));
  child.stderr?.on("data", (chunk) => (output += chunk));
  for (let i = 0; i < 1200; i++) {
    const url = /serving (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
    if (url) return { url, key, child, dataDir };
    if (child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  child.kill("SIGKILL");
  throw new Error(`the service at ${root} did not start: ${output}`);
}

async function stopService(service: Service): Promise<void> {
  const exited = new Promise((resolve) => service.child.once("exit", resolve));
  service.child.kill("SIGTERM");
  await exited;
  await rm(service.dataDir, { recursive: true, force: true });
}

async function call(service: Service, method: string, urlPath: string, body?: unknown, headers: Record<string, string> = {}): Promise<string> {
  const response = await fetch(service.url + urlPath, {
    method,
    headers: { authorization: `Bearer ${service.key}`, "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status >= 300 && !(response.status === 202 && headers.prefer)) throw new Error(`${method} ${urlPath}: ${response.status} ${text}`);
  return text;
}

async function uncontended(): Promise<void> {
  const baselineDir = process.env.BENCH_BASELINE_DIR;
  const services: [string, Service][] = [["queue", await startService(ROOT, {})]];
  if (baselineDir) services.push(["before", await startService(baselineDir, {})]);
  try {
    for (const [, service] of services) {
      await call(service, "POST", "/functions", { name: "noop", code: "export default async (n: number = 1) => ({ n });" });
      for (let i = 0; i < WARM_UP; i++) await call(service, "POST", "/functions/noop", { n: i });
    }
    const times = new Map<string, number[]>(services.map(([name]) => [name, []]));
    for (let i = 0; i < ROUNDS; i++) {
      for (const [name, service] of i % 2 === 0 ? services : [...services].reverse()) {
        times.get(name)?.push(await timed(() => call(service, "POST", "/functions/noop", { n: i })));
      }
    }
    const report = Object.fromEntries([...times].map(([name, list]) => [name, summary(list)]));
    const before = report.before;
    const queue = report.queue;
    console.log(JSON.stringify({ uncontended_no_browser_ms: report, ...(before && queue ? { p50_delta_ms: round(queue.p50 - before.p50) } : {}) }));
  } finally {
    for (const [, service] of services) await stopService(service);
  }
}

/** Gaps (ms) from a run leaving its automation to the next queued run entering it: also printed by `npm run bench`. */
export async function releaseToStart(): Promise<{ release_to_next_start_ms: ReturnType<typeof summary>; backlog: number }> {
  // The bootstrap key's account is on `pro`: here, one run at a time.
  const plans = { ...DEFAULT_PLANS, pro: { ...DEFAULT_PLANS.pro, concurrency: 1 } };
  const service = await startService(ROOT, { BROWSERFN_PLANS: JSON.stringify(plans) });
  try {
    const code = "export default async (ms: number = 20) => { const entered = Date.now(); await new Promise((r) => setTimeout(r, ms)); return { entered, left: Date.now() }; }";
    await call(service, "POST", "/functions", { name: "stamped", code });
    for (let i = 0; i < 20; i++) await call(service, "POST", "/functions/stamped", { ms: 1 });
    const runIds: string[] = [];
    for (let i = 0; i < BACKLOG; i++) {
      const accepted = JSON.parse(await call(service, "POST", "/functions/stamped", { ms: 20 }, { prefer: "respond-async" })) as { run_id: string };
      runIds.push(accepted.run_id);
    }
    const spans: { entered: number; left: number }[] = [];
    for (const runId of runIds) {
      for (;;) {
        const run = JSON.parse(await call(service, "GET", `/runs/${runId}`)) as { finished_at: string | null; result: { entered: number; left: number } | null };
        if (run.finished_at && run.result) {
          spans.push(run.result);
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    spans.sort((a, b) => a.entered - b.entered);
    const gaps = spans.slice(1).map((span, i) => span.entered - (spans[i]?.left ?? span.entered));
    return { release_to_next_start_ms: summary(gaps), backlog: BACKLOG };
  } finally {
    await stopService(service);
  }
}

async function main(): Promise<void> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
  await uncontended();
  console.log(JSON.stringify(await releaseToStart()));
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
