import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { percentile } from "../../bench/stats";
import { generateApiKey } from "../../lambdas/identity/apiKeys";
import { type ApiResponse, requestJson } from "../helpers/http";
import { type PageServer, startPageServer } from "../helpers/pageServer";
import { processesWith, rssMb } from "../helpers/processes";
import { browserPids } from "../helpers/sandboxProbes";
import { startChildService } from "../helpers/childService";

export interface SoakOptions {
  durationMs: number;
  /** Operations started per second, at a steady pace (open loop: not waiting for answers). */
  ratePerSecond: number;
  /** Seconds between two simultaneous invocations on an account whose plan allows one run at a time. */
  plannedRefusalEverySeconds: number;
  /** RSS is measured from here on (after the workers and browsers are warm). */
  warmupMs: number;
  /** The service's sync window (BROWSERFN_SYNC_WAIT_SECONDS, default 25): the planned pair's first call holds its slot past it. */
  syncWaitSeconds?: number;
  log?: (line: string) => void;
}

export interface SoakReport {
  duration_s: number;
  operations: number;
  /** Operations not started because too many were still in flight (the service fell behind). */
  skipped: number;
  by_kind: Record<string, { n: number; p50_ms: number; p95_ms: number; max_ms: number }>;
  /** Every status seen, by kind: `kind status[/code]` → count. */
  outcomes: Record<string, number>;
  /** Outcomes that were neither a success nor a planned 429. */
  unexpected: { kind: string; status: number; body: string }[];
  planned_429s: number;
  planned_pairs: number;
  rss_mb: { service_start: number; service_end: number; service_max: number; dynalite_start: number; dynalite_end: number };
  processes: { workers_max: number; browsers_max: number; left_after_stop: number };
  runs_not_final: number;
  service_exit_code: number | null;
}

const MAX_IN_FLIGHT = 400;
const CHURN_NAMES = 12;

const ECHO = "export default async (message: string = 'hi', times: number = 1) => ({ echo: Array.from({ length: times }, () => message) });\n";
const TITLE = `import { Session } from "browserfn/runtime";
export default async function run(url: string) {
  await using session = await Session.start({ timeout_minutes: 1 });
  const page = await session.newPage();
  await page.goto(url);
  return { title: await page.title() };
}
`;
const HOLD = "export default async (ms: number) => { await new Promise((r) => setTimeout(r, ms)); return 'held'; };\n";
const churnCode = (n: number) => `export default async (x: number = ${n}) => ({ x, at: Date.now() });\n`;

/**
 * Steady mixed traffic against the service in a child process (as `npm start` runs it):
 * management (create, update, delete, list, info, versions), reads (logs, metrics, runs) and
 * invocations of a no-browser and a browser function against a page server on 127.0.0.1,
 * plus, at intervals, two simultaneous calls on an account whose plan allows one run at a
 * time (one planned 429). Measures latency per kind, outcomes, the service's RSS and its
 * worker and browser processes; stops the service and checks nothing is left.
 */
export async function runMixedLoad(options: SoakOptions): Promise<SoakReport> {
  const log = options.log ?? (() => undefined);
  const syncWaitSeconds = options.syncWaitSeconds ?? 25;
  const dataDir = await mkdtemp(path.join(tmpdir(), "browserfn-soak-"));
  const key = generateApiKey();
  const plans = {
    free: { concurrency: 2, invocations_per_month: 1000, max_timeout_seconds: 300, max_memory_mb: 2048 },
    pro: { concurrency: 25, invocations_per_month: 1_000_000, max_timeout_seconds: 900, max_memory_mb: 10240 },
    single: { concurrency: 1, invocations_per_month: 1_000_000, max_timeout_seconds: 60, max_memory_mb: 1024, max_queued: 0 },
  };
  const pages: PageServer = await startPageServer();
  const service = await startChildService(dataDir, key, {
    BROWSERFN_PLANS: JSON.stringify(plans),
    BROWSERFN_SYNC_WAIT_SECONDS: String(syncWaitSeconds),
    BROWSERFN_MAX_WORKERS: "8",
    BROWSERFN_RATE_LIMIT_PER_SECOND: "0",
    // Its pages are served on 127.0.0.1.
    BROWSERFN_ALLOW_LOCAL_NETWORK: "true",
  });
  const runtimeDir = (await readFile(path.join(dataDir, "runtime-dir"), "utf8")).trim();
  const latencies: Record<string, number[]> = {};
  const outcomes: Record<string, number> = {};
  const unexpected: SoakReport["unexpected"] = [];
  /** Run ids the service answered with, and which answer it was (to trace a run that cannot be found later). */
  const runIds: { id: string; from: string; token: string }[] = [];
  let planned429s = 0;
  let plannedPairs = 0;
  let operations = 0;
  let skipped = 0;
  let inFlight = 0;

  const call = (method: string, urlPath: string, body?: unknown, token = key, headers?: Record<string, string>) =>
    requestJson(service.url, method, urlPath, { token, body, headers });
  /** One timed operation; `ok` says which statuses are expected. */
  const timed = async (
    kind: string,
    work: () => Promise<ApiResponse>,
    ok: (r: ApiResponse) => boolean = (r) => r.status < 300,
    token = key,
  ) => {
    inFlight++;
    operations++;
    const started = performance.now();
    let response: ApiResponse;
    try {
      response = await work();
    } catch (error) {
      response = { status: 0, headers: new Headers(), text: String(error), body: undefined };
    } finally {
      inFlight--;
    }
    (latencies[kind] ??= []).push(performance.now() - started);
    const outcome = `${kind} ${response.status}${response.body?.error?.code ? `/${response.body.error.code}` : ""}`;
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    if (!ok(response)) unexpected.push({ kind, status: response.status, body: response.text.slice(0, 300) });
    const runId = response.headers.get("x-run-id");
    if (runId) {
      runIds.push({ id: runId, from: outcome, token });
      if (runIds.length > 200) runIds.shift();
    }
    return response;
  };

  const rss = { service_start: 0, service_end: 0, service_max: 0, dynalite_start: 0, dynalite_end: 0 };
  const counts = { workers_max: 0, browsers_max: 0 };
  const dynalitePid = () => processesWith("dynaliteChild.cjs").find((pid) => processesWith(dataDir).includes(pid));
  let report: SoakReport | undefined;
  try {
    const single = String(
      (await call("POST", "/api-keys", { account: "soak-single", plan: "single" })).body.key,
    );
    for (const [name, code, token] of [
      ["echo", ECHO, key],
      ["title", TITLE, key],
      ["hold", HOLD, single],
    ] as const) {
      const created = await call("POST", "/functions", { name, code }, token);
      if (created.status !== 201) throw new Error(`creating ${name}: ${created.status} ${created.text}`);
    }
    const churn = new Map<string, "absent" | "present" | "busy">(Array.from({ length: CHURN_NAMES }, (_, i) => [`churn-${i}`, "absent"]));
    let churnVersion = 0;
    const pick = <T>(list: T[]): T | undefined => list[Math.floor(Math.random() * list.length)];
    const churnOp = async (want: "absent" | "present", run: (name: string) => Promise<unknown>) => {
      const name = pick([...churn].filter(([, state]) => state === want).map(([n]) => n));
      if (!name) return;
      churn.set(name, "busy");
      await run(name);
    };
    const kinds: [number, () => Promise<unknown>][] = [
      [30, () => timed("invoke_echo", () => call("POST", "/functions/echo", { message: "soak", times: 3 }))],
      [15, () => timed("invoke_browser", () => call("GET", `/functions/title?url=${encodeURIComponent(`${pages.url}/title/soak`)}`))],
      [8, () => timed("list", () => call("GET", "/functions?limit=50"))],
      [8, () => timed("info", () => call("GET", "/functions/echo/info"))],
      [6, () => timed("logs", () => call("GET", "/functions/echo/logs?limit=20"))],
      [6, () => timed("metrics", () => call("GET", "/functions/title/metrics"))],
      [4, () => timed("versions", () => call("GET", "/functions/echo/versions"))],
      [5, async () => {
        const run = pick(runIds);
        if (!run) return;
        const answer = await timed("get_run", () => call("GET", `/runs/${run.id}`, undefined, run.token), undefined, run.token);
        if (answer.status === 404) log(`run ${run.id} (from a '${run.from}' answer) is not found`);
      }],
      [6, () => churnOp("absent", async (name) => {
        const r = await timed("create", () => call("POST", "/functions", { name, code: churnCode(++churnVersion) }));
        churn.set(name, r.status === 201 ? "present" : "absent");
      })],
      [6, () => churnOp("present", async (name) => {
        await timed("update", () => call("PATCH", `/functions/${name}`, { code: churnCode(++churnVersion), description: `v${churnVersion}` }));
        churn.set(name, "present");
      })],
      [3, () => churnOp("present", async (name) => {
        await timed("invoke_churn", () => call("POST", `/functions/${name}`));
        churn.set(name, "present");
      })],
      [3, () => churnOp("present", async (name) => {
        const r = await timed("delete", () => call("DELETE", `/functions/${name}`));
        churn.set(name, r.status === 204 ? "absent" : "present");
      })],
    ];
    const totalWeight = kinds.reduce((sum, [w]) => sum + w, 0);
    const chooseKind = () => {
      let roll = Math.random() * totalWeight;
      for (const [weight, op] of kinds) {
        roll -= weight;
        if (roll < 0) return op;
      }
      return kinds[0]![1];
    };
    const holdMs = syncWaitSeconds * 1000 + 1500;
    const plannedPair = async () => {
      plannedPairs++;
      // Two at once on a one-run plan that queues nothing: one holds the slot past the sync window
      // (202), the other finds no room in the run queue (429 queue_full).
      const holdOk = (r: ApiResponse) => r.status === 202 || r.status === 200 || (r.status === 429 && r.body?.error?.code === "queue_full" && Number(r.headers.get("retry-after")) > 0);
      const results = await Promise.all([
        timed("invoke_hold", () => call("POST", "/functions/hold", { ms: holdMs }, single), holdOk, single),
        timed("invoke_hold", () => call("POST", "/functions/hold", { ms: holdMs }, single), holdOk, single),
      ]);
      planned429s += results.filter((r) => r.status === 429).length;
    };

    const started = Date.now();
    const interval = 1000 / options.ratePerSecond;
    const pending = new Set<Promise<unknown>>();
    const track = (work: Promise<unknown>) => {
      pending.add(work);
      void work.finally(() => pending.delete(work));
    };
    let nextPair = started + options.plannedRefusalEverySeconds * 1000;
    let nextSample = started;
    for (let tick = 0; Date.now() - started < options.durationMs; tick++) {
      const due = started + tick * interval;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      if (inFlight >= MAX_IN_FLIGHT) skipped++;
      else track(chooseKind()());
      const now = Date.now();
      if (now >= nextPair) {
        nextPair += options.plannedRefusalEverySeconds * 1000;
        track(plannedPair());
      }
      if (now >= nextSample) {
        nextSample += 5000;
        const serviceRss = rssMb(service.child.pid);
        const pastWarmup = now - started >= options.warmupMs;
        if (pastWarmup && rss.service_start === 0) {
          rss.service_start = serviceRss;
          rss.dynalite_start = rssMb(dynalitePid());
        }
        if (pastWarmup) rss.service_max = Math.max(rss.service_max, serviceRss);
        const processes = processesWith(runtimeDir);
        counts.workers_max = Math.max(counts.workers_max, processesWith(`${runtimeDir}/worker.cjs`).length);
        counts.browsers_max = Math.max(counts.browsers_max, browserPids(runtimeDir).length);
        log(`${Math.round((now - started) / 1000)}s ops=${operations} in_flight=${inFlight} rss=${serviceRss}MB processes=${processes.length} unexpected=${unexpected.length}`);
      }
    }
    await Promise.all([...pending]);
    rss.service_end = rssMb(service.child.pid);
    rss.dynalite_end = rssMb(dynalitePid());
    rss.service_max = Math.max(rss.service_max, rss.service_end);

    // Every run of the soak has ended (the holds end within seconds of the last call).
    let active = -1;
    for (let i = 0; i < 60 && active !== 0; i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 500));
      active = 0;
      for (const { id, token } of runIds) {
        const status = (await call("GET", `/runs/${id}`, undefined, token)).body?.status;
        if (!["succeeded", "failed", "timed_out"].includes(status)) active++;
      }
    }
    const exitCode = await service.stop();
    let left = processesWith(runtimeDir).length;
    for (let i = 0; i < 100 && left > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      left = processesWith(runtimeDir).length;
    }
    const byKind: SoakReport["by_kind"] = {};
    for (const [kind, values] of Object.entries(latencies).sort()) {
      byKind[kind] = {
        n: values.length,
        p50_ms: Math.round(percentile(values, 0.5)),
        p95_ms: Math.round(percentile(values, 0.95)),
        max_ms: Math.round(Math.max(...values)),
      };
    }
    report = {
      duration_s: Math.round((Date.now() - started) / 1000),
      operations,
      skipped,
      by_kind: byKind,
      outcomes: Object.fromEntries(Object.entries(outcomes).sort()),
      unexpected,
      planned_429s: planned429s,
      planned_pairs: plannedPairs,
      rss_mb: rss,
      processes: { ...counts, left_after_stop: left + (dynalitePid() ? 1 : 0) },
      runs_not_final: active,
      service_exit_code: exitCode,
    };
    return report;
  } finally {
    await service.kill();
    await pages.close();
    await rm(dataDir, { recursive: true, force: true });
    if (!report) log(`service output:\n${service.output().slice(-5000)}`);
  }
}
