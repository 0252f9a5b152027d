/**
 * Issue #26, item 2: another tenant's invocation latency while a hostile account poisons the
 * webhooks, against the same figure on the idle service, in the same run (`npm run
 * bench:hostile:webhooks`; docs/benchmarks.md, "Hostile tenants (issue #26)"). The service runs in
 * its own process, as `npm start` runs it (default webhook retry pace: 5 s base).
 *
 * The poison, what a hostile tenant can still produce now that results past 64 levels are refused:
 * 1. before the measured phases, POISONED_RECORDS run records written straight into the store
 *    (the service stopped, its dynalite opened by the bench) with a result_json nested 100,000
 *    deep and a pending webhook delivery, as an earlier version let a forged `done` record
 *    them; then the service is started again on the same data dir (the poison survives the
 *    restart). The service's idle CPU is measured right after that restart;
 * 2. in each hostile phase, HOSTILE_CALLERS callers of the hostile account call, without pause
 *    (each waiting for its answer, so the hostile load ends with the phase), its function whose results are just under the caps (nested MAX_JSON_DEPTH deep, a few
 *    MB), each with a webhook to a receiver that never answers and one that answers 500 (so every
 *    delivery is retried).
 * The hostile callers and the receivers run in processes of their own (hostileWebhookPeers.ts):
 * the 3 MB answers and webhook bodies they read do not share the event loop that times the
 * other tenant's calls, and, as remote peers (remotePeer.ts), not its CPU either.
 * Idle and hostile phases alternate (BENCH_PHASES, default 4; BENCH_ROUNDS no-browser
 * invocations of the other account's function in all of each). In the idle phases the hostile
 * account starts nothing, but the deliveries it left owing are still retried.
 */
import type { ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { generateApiKey } from "../lambdas/identity/apiKeys";
import { createDynaliteClients } from "../lambdas/local/dynaliteClient";
import { startDynalite } from "../lambdas/local/dynaliteServer";
import { copyRun } from "../lambdas/runs/copyRun";
import { MAX_JSON_DEPTH } from "../lambdas/runner/outputLimits";
import { createStore } from "../lambdas/store/store";
import { deliveryIdOf } from "../lambdas/webhooks/webhookTypes";
import { startChildService, type ChildService } from "../test/helpers/childService";
import { processCpuMs, readTreeCpu } from "./processCpu";
import { startRemotePeer } from "./remotePeer";
import { ratioInterval, round, summary, TENANT_GAP_MS, tenantGap, timed } from "./stats";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 160);
const PHASES = Number(process.env.BENCH_PHASES ?? 4);
const HOSTILE_CALLERS = Number(process.env.BENCH_HOSTILE_CALLERS ?? 4);
const POISONED_RECORDS = Number(process.env.BENCH_POISONED_RECORDS ?? 10);
const RESULT_MB = Number(process.env.BENCH_RESULT_MB ?? 3);
/** BENCH_HOSTILE_ASYNC=1: the hostile callers start respond-async runs (a queued backlog that outlasts the phase) instead of waiting for each. */
const ASYNC = process.env.BENCH_HOSTILE_ASYNC === "1";
/** BENCH_NO_WEBHOOKS=1: the control, the same hostile runs without their webhooks (what the results alone cost). */
const NO_WEBHOOKS = process.env.BENCH_NO_WEBHOOKS === "1";
/** BENCH_SERVICE_LOG=<file>: what the restarted service printed (its webhook attempts among it), written there at the end. */
const SERVICE_LOG = process.env.BENCH_SERVICE_LOG;
const DEEP = 100_000;
const ENV = { BROWSERFN_RATE_LIMIT_PER_SECOND: "0", BROWSERFN_ALLOW_LOCAL_NETWORK: "true" };

/** A result just under the caps: MAX_JSON_DEPTH levels in all, RESULT_MB of text at the bottom. */
const HOSTILE_FN = `export default async () => {
  let value: unknown = { filler: "x".repeat(${RESULT_MB} * 1024 * 1024) };
  for (let i = 2; i < ${MAX_JSON_DEPTH}; i++) value = [value];
  return value;
};`;

/** The hostile tenant's side (bench/hostileWebhookPeers.ts) in a process of its own. */
function peers(...args: string[]): ChildProcess {
  const { child, placed } = startRemotePeer("hostileWebhookPeers.ts", args);
  placed.catch(() => undefined);
  return child;
}

/** Its two webhook receivers: one never answers, one answers `setStatus`'s status (200 at first). */
async function startReceivers() {
  const child = peers("--receivers");
  const urls = await new Promise<{ hanging: string; failing: string }>((resolve, reject) => {
    child.once("message", (message: { urls: { hanging: string; failing: string } }) => resolve(message.urls));
    child.once("exit", (code) => reject(new Error(`the receivers exited (${code})`)));
  });
  return {
    urls,
    setStatus: (status: number) => child.send({ status }),
    counts: () =>
      new Promise<Record<string, number>>((resolve) => {
        child.once("message", (message: { counts: Record<string, number> }) => resolve(message.counts));
        child.send({ counts: true });
      }),
    close: async () => {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
    },
  };
}

/** The machine's CPU time so far (ms, all cores): busy and in all, from /proc/stat. */
function machineCpu(): { busy: number; all: number } {
  const fields = (/^cpu\s+(.*)$/m.exec(readFileSync("/proc/stat", "utf8"))?.[1] ?? "").split(/\s+/).map(Number);
  const all = fields.slice(0, 8).reduce((sum, value) => sum + value, 0);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  return { busy: (all - idle) * 10, all: all * 10 };
}

async function main(): Promise<void> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
  const dataDir = await mkdtemp(path.join(tmpdir(), "browserfn-bench-webhooks-"));
  const adminKey = generateApiKey();
  // Receivers: one never answers; one answers 500 while hostile, 200 in the idle phases.
  const receivers = await startReceivers();
  const hanging = { url: receivers.urls.hanging };
  const failing = { url: receivers.urls.failing };
  receivers.setStatus(500);
  let service: ChildService = await startChildService(dataDir, adminKey, ENV);
  try {
    const request = async (method: string, urlPath: string, key: string, body?: unknown, headers: Record<string, string> = {}) => {
      const response = await fetch(service.url + urlPath, {
        method,
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, text: await response.text() };
    };
    const account = async (name: string) => {
      const { status, text } = await request("POST", "/api-keys", adminKey, { account: name, plan: "pro" });
      if (status !== 201) throw new Error(`account ${name}: ${status} ${text}`);
      return (JSON.parse(text) as { key: string }).key;
    };
    const deploy = async (key: string, body: unknown) => {
      const { status, text } = await request("POST", "/functions", key, body);
      if (status !== 201) throw new Error(`deploy: ${status} ${text}`);
    };
    const [other, hostile] = [await account("other"), await account("hostile")];
    await deploy(other, { name: "noop", code: "export default async (n: number = 1) => ({ n });" });
    await deploy(hostile, { name: "poison", code: HOSTILE_FN, timeout_seconds: 60, webhooks: NO_WEBHOOKS ? [] : [{ url: hanging.url }, { url: failing.url }] });

    // The hostile function's result is accepted (just under the caps), and its runs to overwrite.
    const first = await request("POST", "/functions/poison", hostile);
    if (first.status !== 200) throw new Error(`the hostile run was refused (${first.status}): ${first.text.slice(0, 300)}`);
    const realIds: string[] = [];
    for (let i = 0; i < POISONED_RECORDS; i++) {
      const { status, text } = await request("POST", "/functions/poison", hostile, undefined, { prefer: "respond-async" });
      if (status !== 202) throw new Error(`respond-async: ${status} ${text}`);
      realIds.push((JSON.parse(text) as { run_id: string }).run_id);
    }
    // Their runs ended (their deliveries are under way).
    for (const runId of realIds) {
      for (let i = 0; ; i++) {
        const { text } = await request("GET", `/runs/${runId}`, hostile);
        if (/"status":"(succeeded|failed)"/.test(text)) break;
        if (i > 600) throw new Error(`run ${runId} did not end`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }

    // The pre-fix poison: the service stopped, each of those records rewritten as one an earlier
    // version kept (succeeded, 100,000 deep, owing its webhook to the hanging receiver).
    if ((await service.stop()) !== 0) throw new Error(`the service did not stop cleanly: ${service.output().slice(-2000)}`);
    const dynamo = await startDynalite(path.join(dataDir, "dynamodb"));
    const clients = createDynaliteClients(dynamo.endpoint, dynamo.secret);
    try {
      const store = createStore(clients.doc, "browserfn");
      const deep = "[".repeat(DEEP) + "]".repeat(DEEP);
      for (const runId of realIds) {
        const real = await store.runs.get(runId);
        if (!real) throw new Error(`no run ${runId}`);
        const running = { ...copyRun(real), status: "running" as const };
        await store.runs.put(running);
        const pending = [{ delivery_id: deliveryIdOf(runId, 0), url: hanging.url, event: "run.succeeded" as const }];
        if (!(await store.runs.putIfActive({ ...running, status: "succeeded", result_json: deep }, pending))) throw new Error(`poison ${runId} not written`);
      }
    } finally {
      clients.destroy();
      await dynamo.close();
    }
    service = await startChildService(dataDir, adminKey, ENV);
    const pid = service.child.pid ?? 0;
    const serviceCpu = () => {
      const parts = readTreeCpu(pid);
      return parts.service + parts.dynalite;
    };
    /** The service's (and its dynalite's) CPU ms per second over `ms` of no requests. */
    const idleCpu = async (ms: number) => {
      const [cpu0, wall0] = [serviceCpu(), performance.now()];
      await new Promise((resolve) => setTimeout(resolve, ms));
      return round(((serviceCpu() - cpu0) / (performance.now() - wall0)) * 1000);
    };
    const idleCpuAfterRestart = await idleCpu(5_000);
    const poisonedGet = await request("GET", `/runs/${realIds[0]}`, hostile);

    let n = 0;
    const invoke = async () => {
      const { status, text } = await request("POST", "/functions/noop", other, { n: n++ });
      if (status !== 200) throw new Error(`invoke: ${status} ${text}`);
    };
    for (let i = 0; i < 50; i++) await invoke(); // warm worker
    const idle: number[] = [];
    const poisoned: number[] = [];
    const hostileAnswers: Record<string, number> = {};
    const phaseCpu = () => ({ wall: 0, ms: 0, own: 0, tree: 0, machineBusy: 0, machineAll: 0, callers: 0 });
    const cpu = { idle: phaseCpu(), hostile: phaseCpu() };
    const treeCpu = () => Object.values(readTreeCpu(pid)).reduce((sum, value) => sum + value, 0);
    const measure = async (into: number[], tally: ReturnType<typeof phaseCpu>, callers?: number) => {
      const [cpu0, own0, tree0, machine0, wall0] = [serviceCpu(), readTreeCpu(pid).service, treeCpu(), machineCpu(), performance.now()];
      const callers0 = callers ? processCpuMs(callers) : 0;
      for (let i = 0; i < Math.ceil(ROUNDS / PHASES); i++) {
        await tenantGap();
        into.push(await timed(invoke));
      }
      const machine = machineCpu();
      tally.ms += serviceCpu() - cpu0;
      tally.own += readTreeCpu(pid).service - own0;
      tally.tree += treeCpu() - tree0;
      tally.machineBusy += machine.busy - machine0.busy;
      tally.machineAll += machine.all - machine0.all;
      if (callers) tally.callers += processCpuMs(callers) - callers0;
      tally.wall += performance.now() - wall0;
    };
    for (let phase = 0; phase < PHASES; phase++) {
      receivers.setStatus(200);
      await measure(idle, cpu.idle);
      receivers.setStatus(500);
      const callers = peers("--callers", service.url, hostile, String(HOSTILE_CALLERS), ASYNC ? "1" : "0");
      let output = "";
      callers.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
      const ended = new Promise((resolve) => callers.once("exit", resolve));
      await new Promise((resolve) => setTimeout(resolve, 1_000)); // the hostile runs under way
      await measure(poisoned, cpu.hostile, callers.pid);
      callers.kill("SIGTERM");
      await ended;
      const answers = JSON.parse(/answers=(.*)/.exec(output)?.[1] ?? "{}") as Record<string, number>;
      for (const [status, count] of Object.entries(answers)) hostileAnswers[status] = (hostileAnswers[status] ?? 0) + count;
    }
    const idleCpuAtEnd = await idleCpu(5_000);
    const deliveries = await request("GET", "/functions/poison/deliveries?limit=100", hostile);
    const byStatus: Record<string, number> = {};
    const byError: Record<string, number> = {};
    for (const item of (JSON.parse(deliveries.text) as { items?: { status: string; attempts: number; last_error: string | null }[] }).items ?? []) {
      byStatus[item.status] = (byStatus[item.status] ?? 0) + 1;
      // What their last attempt got (none yet: "not attempted"), ports and ids left out.
      const error = item.attempts === 0 ? "not attempted" : (item.last_error ?? "delivered").replace(/\d+/g, "N");
      byError[error] = (byError[error] ?? 0) + 1;
    }

    const [idleSummary, poisonSummary] = [summary(idle), summary(poisoned)];
    console.log(
      JSON.stringify(
        {
          rounds: ROUNDS,
          phases: PHASES,
          tenant_gap_ms: TENANT_GAP_MS,
          hostile_callers: HOSTILE_CALLERS,
          hostile_calls: ASYNC ? "respond-async" : "synchronous",
          hostile_webhooks: !NO_WEBHOOKS,
          hostile_result: { depth: MAX_JSON_DEPTH, mb: RESULT_MB },
          poisoned_records_100k_deep: POISONED_RECORDS,
          poisoned_run_get_status: poisonedGet.status,
          tenant_invoke_idle_ms: idleSummary,
          tenant_invoke_during_poison_ms: poisonSummary,
          poison_over_idle_p50_ratio: round(poisonSummary.p50 / idleSummary.p50),
          poison_over_idle_p50_ratio_90pct: ratioInterval(poisoned, idle),
          hostile_runs_started_by_status: hostileAnswers,
          webhook_requests: await receivers.counts(),
          hostile_deliveries_last_100_by_status: byStatus,
          hostile_deliveries_last_100_by_last_error: byError,
          // The service's process and its dynalite (not the workers), CPU ms per second.
          service_cpu_ms_per_s: {
            no_requests_after_restart_with_poison: idleCpuAfterRestart,
            idle_phases: round((cpu.idle.ms / cpu.idle.wall) * 1000),
            hostile_phases: round((cpu.hostile.ms / cpu.hostile.wall) * 1000),
            no_requests_at_end: idleCpuAtEnd,
          },
          // Of those, the service's own process alone (its threads too: the result thread, zlib's pool), without dynalite.
          service_process_cpu_ms_per_s: { idle_phases: round((cpu.idle.own / cpu.idle.wall) * 1000), hostile_phases: round((cpu.hostile.own / cpu.hostile.wall) * 1000) },
          // The service's whole tree (workers, their hosts and browsers, and what they reaped, too), CPU ms per second.
          service_tree_cpu_ms_per_s: { idle_phases: round((cpu.idle.tree / cpu.idle.wall) * 1000), hostile_phases: round((cpu.hostile.tree / cpu.hostile.wall) * 1000) },
          // The hostile callers' own process (reading the answers): on this machine for the bench, elsewhere in real life.
          hostile_callers_cpu_ms_per_s: round((cpu.hostile.callers / cpu.hostile.wall) * 1000),
          // The whole machine (every process of every user): the share of all its cores that was busy.
          machine_busy_share: { idle_phases: round(cpu.idle.machineBusy / cpu.idle.machineAll), hostile_phases: round(cpu.hostile.machineBusy / cpu.hostile.machineAll) },
        },
        null,
        2,
      ),
    );
  } finally {
    await service.stop();
    if (SERVICE_LOG) writeFileSync(SERVICE_LOG, service.output());
    await receivers.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
