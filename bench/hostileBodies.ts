/**
 * Issue #26, item 7: another tenant's invocation latency while an unauthenticated body flood is
 * going on, against the same figure on the idle service, in the same run (`npm run
 * bench:hostile`). The flood: BENCH_FLOOD_CONNECTIONS (default 60) connections from 127.0.0.1
 * without an API key, each declaring a 6 MB body and sending 5 MB of it, never the rest; a
 * connection the service closes is opened again at once, so the flood never lets up. Idle
 * and flooded phases alternate (BENCH_PHASES, default 5; BENCH_ROUNDS invocations in all of each).
 */
import { spawn } from "node:child_process";
import { connect } from "node:net";
import { startBenchService } from "./benchService";
import { readTreeCpu } from "./processCpu";
import { readTreeMemory } from "./processMemory";
import { ratioInterval, round, summary, TENANT_GAP_MS, tenantGap, timed } from "./stats";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 150);
const CONNECTIONS = Number(process.env.BENCH_FLOOD_CONNECTIONS ?? 60);
/** Idle and flooded phases, alternating. */
const PHASES = Number(process.env.BENCH_PHASES ?? 5);
const MB = 1024 * 1024;

/** One flooding connection after another, until `stopped()`; counts the connections it opened. */
async function floodSlot(url: URL, stopped: () => boolean, opened: { count: number }): Promise<void> {
  const piece = Buffer.alloc(64 * 1024, "x");
  while (!stopped()) {
    opened.count++;
    await new Promise<void>((resolve) => {
      const socket = connect({ host: url.hostname, port: Number(url.port) });
      socket.on("error", () => undefined);
      socket.once("close", () => resolve());
      socket.once("connect", () => {
        socket.write(`POST /functions/anything HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${6 * MB}\r\n\r\n`);
        let sent = 0;
        const pump = () => {
          while (sent < 5 * MB && !socket.destroyed) {
            sent += piece.length;
            if (!socket.write(piece)) return void socket.once("drain", pump);
          }
        };
        pump();
      });
      // The bench stops what the service has not closed.
      const stop = setInterval(() => stopped() && socket.destroy(), 200);
      socket.once("close", () => clearInterval(stop));
    });
  }
}

async function main(): Promise<void> {
  const service = await startBenchService("process", "tests");
  try {
    const admin = { authorization: `Bearer ${service.key}`, "content-type": "application/json" };
    const created = await fetch(`${service.url}/api-keys`, { method: "POST", headers: admin, body: JSON.stringify({ account: "tenant", plan: "pro" }) });
    const tenantKey = ((await created.json()) as { key: string }).key;
    const tenant = { authorization: `Bearer ${tenantKey}`, "content-type": "application/json" };
    const deployed = await fetch(`${service.url}/functions`, { method: "POST", headers: tenant, body: JSON.stringify({ name: "echo", code: "export default async (n: number) => ({ n });" }) });
    if (deployed.status !== 201) throw new Error(`deploy: ${deployed.status} ${await deployed.text()}`);
    const invoke = async () => {
      const answer = await fetch(`${service.url}/functions/echo`, { method: "POST", headers: tenant, body: '{"n":1}' });
      await answer.text();
      if (answer.status !== 200) throw new Error(`invoke: ${answer.status}`);
    };
    for (let i = 0; i < 20; i++) await invoke(); // warm worker
    const memory = async () => (service.pid === null ? null : round((await readTreeMemory(service.pid)).pss_mb));

    // Idle and flooded phases alternate, so a machine that gets busier or quieter meanwhile
    // weighs on both figures alike.
    const idle: number[] = [];
    const flooded: number[] = [];
    let failures = 0;
    let opened = 0;
    let memoryIdle: number | null = null;
    let memoryFlooded: number | null = null;
    const perPhase = Math.ceil(ROUNDS / PHASES);
    /** The service process's own CPU (ms) and the wall time (ms) each kind of phase took. */
    const cpu = { idle: { ms: 0, wall: 0 }, flood: { ms: 0, wall: 0 } };
    const serviceCpu = () => (service.pid === null ? 0 : readTreeCpu(service.pid).service);
    const measure = async (into: { ms: number; wall: number }, work: () => Promise<void>) => {
      const [cpu0, wall0] = [serviceCpu(), performance.now()];
      await work();
      into.ms += serviceCpu() - cpu0;
      into.wall += performance.now() - wall0;
    };
    for (let phase = 0; phase < PHASES; phase++) {
      await measure(cpu.idle, async () => {
        for (let i = 0; i < perPhase; i++) {
          await tenantGap();
          idle.push(await timed(invoke));
        }
      });
      memoryIdle = Math.max(memoryIdle ?? 0, (await memory()) ?? 0);
      // The flood from a process of its own: its sockets do not share the tenant's event loop.
      const flood = spawn(process.execPath, [...process.execArgv, __filename, "--flood", service.url], { stdio: ["ignore", "pipe", "inherit"] });
      let floodOutput = "";
      flood.stdout.on("data", (chunk: Buffer) => (floodOutput += chunk.toString()));
      const floodEnded = new Promise((resolve) => flood.once("exit", resolve));
      await new Promise((resolve) => setTimeout(resolve, 1_000)); // the flood under way
      await measure(cpu.flood, async () => {
        for (let i = 0; i < perPhase; i++) {
          await tenantGap();
          flooded.push(await timed(() => invoke().catch(() => failures++)));
        }
      });
      memoryFlooded = Math.max(memoryFlooded ?? 0, (await memory()) ?? 0);
      flood.kill("SIGTERM");
      await floodEnded;
      opened += Number(/opened=(\d+)/.exec(floodOutput)?.[1] ?? 0);
    }

    const idleSummary = summary(idle);
    const floodSummary = summary(flooded);
    console.log(
      JSON.stringify(
        {
          rounds: ROUNDS,
          tenant_gap_ms: TENANT_GAP_MS,
          flood_connections: CONNECTIONS,
          phases: PHASES,
          flood_connections_opened: opened,
          sandbox: service.sandbox.mode,
          tenant_invoke_idle_ms: idleSummary,
          tenant_invoke_during_flood_ms: floodSummary,
          flood_over_idle_p50_ratio: round(floodSummary.p50 / idleSummary.p50),
          flood_over_idle_p50_ratio_90pct: ratioInterval(flooded, idle),
          tenant_failures_during_flood: failures,
          // The service's own process (not its workers or dynalite): CPU ms per second of each kind of phase.
          service_cpu_ms_per_s: { idle: round((cpu.idle.ms / cpu.idle.wall) * 1000), during_flood: round((cpu.flood.ms / cpu.flood.wall) * 1000) },
          service_pss_mb_max: { idle: memoryIdle, during_flood: memoryFlooded },
        },
        null,
        2,
      ),
    );
  } finally {
    await service.close();
  }
}

/** The flood's own process: floods `url` until SIGTERM, then says how many connections it opened. */
async function flood(url: string): Promise<void> {
  let stop = false;
  const opened = { count: 0 };
  process.once("SIGTERM", () => (stop = true));
  await Promise.all(Array.from({ length: CONNECTIONS }, () => floodSlot(new URL(url), () => stop, opened)));
  process.stdout.write(`opened=${opened.count}\n`);
}

const floodUrl = process.argv[2] === "--flood" ? process.argv[3] : undefined;
void (floodUrl ? flood(floodUrl) : main()).catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
