/**
 * `npm run bench:no-browser`: the no-browser warm path alone (docs/benchmarks.md, "Round 4,
 * session 12"), side by side with the HTTP floor and, with BENCH_BASELINE_DIR (another checkout,
 * node_modules linked), with that checkout's service, calls interleaved:
 * - a no-browser invoke's p50 against the floor's (sequential calls);
 * - invokes/s at 8 callers against the floor's;
 * - CPU time per call of each service's process tree, split (service, dynalite, worker, host),
 *   which, unlike wall times, does not move with the machine's load;
 * - a fresh worker process's start (spawned as its host spawns it, to `ready`): wall and CPU,
 *   against an empty Node process's, for this checkout's worker bundle and the baseline's.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { generateApiKey } from "../lambdas/identity/apiKeys";
import { prepareRunnerBundles } from "../lambdas/runtime/local/sandbox/prebuiltRunner";
import { startChildService } from "../test/helpers/childService";
import { startHttpFloor } from "./benchService";
import { perCall, readTreeCpu } from "./processCpu";
import { round, summary, timed } from "./stats";
import { throughputSideBySide } from "./throughput";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 240);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const WORKER_STARTS = Number(process.env.BENCH_WORKER_STARTS ?? 20);
const ROOT = path.resolve(__dirname, "..");

interface Target {
  name: string;
  url: string;
  pid: number;
  call(): Promise<unknown>;
  stop(): Promise<void>;
}

async function startTarget(name: string, root: string): Promise<Target> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "browserfn-bench-nobrowser-"));
  const key = generateApiKey();
  const child = await startChildService(dataDir, key, { BROWSERFN_RATE_LIMIT_PER_SECOND: "0" }, undefined, root);
  const send = async (method: string, urlPath: string, body: unknown) => {
    const response = await fetch(child.url + urlPath, { method, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${name} ${method} ${urlPath}: ${response.status} ${text}`);
    return text;
  };
  await send("POST", "/functions", { name: "noop", code: "export default async (n: number = 1) => ({ n });" });
  let n = 0;
  return {
    name,
    url: child.url,
    pid: child.child.pid ?? 0,
    call: () => send("POST", "/functions/noop", { n: n++ }),
    stop: async () => {
      await child.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** CPU ms per call of each part of the target's tree over `calls` sequential calls. */
async function cpuPerCall(target: Target, calls: number): Promise<Record<string, number>> {
  const before = readTreeCpu(target.pid);
  for (let i = 0; i < calls; i++) await target.call();
  // The work behind the last answers (lease, meter, the standby worker's start) ends first.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const after = readTreeCpu(target.pid);
  const split = perCall(before, after, calls);
  return { ...split, total: round(Object.values(split).reduce((sum, ms) => sum + ms, 0)) };
}

/** CPU ms of a process and its threads so far (/proc/<pid>/task/<tid>/schedstat, ns). */
async function processCpuMs(pid: number): Promise<number> {
  let ns = 0;
  for (const task of await readdir(`/proc/${pid}/task`).catch(() => [])) {
    const text = await readFile(`/proc/${pid}/task/${task}/schedstat`, "utf8").catch(() => "0");
    ns += Number(text.split(" ")[0]);
  }
  return ns / 1e6;
}

/** A worker started as hostMain starts it, given `init`, until it says `ready`: wall and CPU (ms). */
async function workerStart(bundle: string | null, emptyScript: string): Promise<{ wall: number; cpu: number }> {
  const script = bundle ?? emptyScript;
  const started = performance.now();
  const flags = ["--experimental-permission", `--allow-fs-read=${script}`, `--allow-fs-read=${path.join(path.dirname(script), "playwright-core.cjs")}`, "--disable-warning=ExperimentalWarning"];
  const child: ChildProcess = spawn(process.execPath, [...flags, script], { env: {}, stdio: ["ignore", "ignore", "ignore", "ipc"] });
  const ready = new Promise<void>((resolve, reject) => {
    child.on("message", (message: { type?: string }) => (message.type === "ready" ? resolve() : undefined));
    child.once("exit", (code) => reject(new Error(`${script} exited (${code}) before ready`)));
  });
  child.send({ type: "init", code: "module.exports = async function (n) { return { n }; };", parameter_style: "positional", variables: [], token: "t" });
  await ready;
  const wall = performance.now() - started;
  const cpu = await processCpuMs(child.pid ?? 0);
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
  return { wall, cpu };
}

async function workerStarts(baselineDir: string | undefined): Promise<Record<string, { wall_p50_ms: number; cpu_p50_ms: number }>> {
  const dir = await mkdtemp(path.join(tmpdir(), "browserfn-bench-workers-"));
  try {
    const empty = path.join(dir, "empty.cjs");
    await import("node:fs/promises").then((fs) => fs.writeFile(empty, 'process.on("message", (m) => { if (m.type === "init") process.send({ type: "ready" }); });\n'));
    const bundles: [string, string | null][] = [
      ["node_alone", null],
      ["worker", (await prepareRunnerBundles(path.join(dir, "this"))).workerBundle],
    ];
    if (baselineDir) {
      const baseline = path.join(baselineDir, "dist", "runner", "worker.cjs");
      bundles.push(["worker_baseline", baseline]);
    }
    const times = new Map(bundles.map(([name]) => [name, [] as { wall: number; cpu: number }[]]));
    for (let i = 0; i < WORKER_STARTS; i++) {
      for (const [name, bundle] of i % 2 === 0 ? bundles : [...bundles].reverse()) times.get(name)?.push(await workerStart(bundle, empty));
    }
    return Object.fromEntries(
      [...times].map(([name, list]) => [name, { wall_p50_ms: round(summary(list.map((t) => t.wall)).p50), cpu_p50_ms: round(summary(list.map((t) => t.cpu)).p50) }]),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
  const baselineDir = process.env.BENCH_BASELINE_DIR;
  console.log(JSON.stringify({ worker_start: await workerStarts(baselineDir) }));
  const floor = await startHttpFloor();
  const targets = [await startTarget("this", ROOT), ...(baselineDir ? [await startTarget("baseline", baselineDir)] : [])];
  try {
    let n = 0;
    const floorCall = async () => {
      const response = await fetch(`${floor.url}/floor`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n: n++ }) });
      return response.text();
    };
    for (const target of targets) for (let i = 0; i < 100; i++) await target.call();
    const times = new Map<string, number[]>([["floor", []], ...targets.map((target) => [target.name, []] as [string, number[]])]);
    const all: [string, () => Promise<unknown>][] = [["floor", floorCall], ...targets.map((target) => [target.name, target.call] as [string, () => Promise<unknown>])];
    for (let i = 0; i < ROUNDS; i++) {
      for (const [name, call] of i % 2 === 0 ? all : [...all].reverse()) times.get(name)?.push(await timed(call));
    }
    const floorP50 = summary(times.get("floor") ?? []).p50;
    for (const target of targets) {
      const p50 = summary(times.get(target.name) ?? []);
      const throughput = await throughputSideBySide(8, SECONDS, target.call, floorCall);
      const cpu = await cpuPerCall(target, 100);
      console.log(
        JSON.stringify({
          target: target.name,
          no_browser_invoke_ms: p50,
          http_floor_p50_ms: floorP50,
          no_browser_over_http_floor_p50_ratio: round(p50.p50 / floorP50),
          no_browser_per_s_at_8: round(throughput.a),
          http_floor_per_s_at_8: round(throughput.b),
          no_browser_vs_http_floor_throughput_ratio: round(throughput.a / throughput.b),
          cpu_ms_per_no_browser_call: cpu,
        }),
      );
    }
  } finally {
    for (const target of targets) await target.stop();
    await floor.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
