/**
 * Start-up figures of `npm run bench`, each beside `node -e 0` measured in the same loop (the
 * machine's speed changes from minute to minute; docs/benchmarks.md, round 4):
 *
 * - the service's start until `GET /health` answers 200, on a data dir an earlier start made (a
 *   second start), as `npm start` runs it (`node bin/start.cjs`, the bundle dist/local.cjs), and
 *   from the TypeScript sources through tsx (BROWSERFN_FROM_SOURCES=1, what `npm start` was
 *   before the bundles);
 * - `browserfn list --json` against a running service, through the package's bin (bin/cli.js run
 *   by its shebang, as an installed `browserfn` is), and through tsx likewise.
 *
 * Runs alternate: node -e 0, bundle, sources, node -e 0, … Wall times in ms.
 */
import { execFile, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { generateApiKey } from "../lambdas/identity/apiKeys";
import { round, summary } from "./stats";

const ROOT = path.resolve(__dirname, "..");
const BIN = path.join(ROOT, "bin", "cli.js");
const run = promisify(execFile);

export interface StartupFigures {
  runs: number;
  node_e_0_ms: number[];
  service_start_to_health_ms: { bundle: number[]; sources: number[] };
  cli_list_json_ms: { bundle: number[]; sources: number[] };
  /** p50 of each against the p50 of `node -e 0`. */
  p50: {
    node_e_0_ms: number;
    service_start_bundle_ms: number;
    service_start_sources_ms: number;
    cli_list_bundle_ms: number;
    cli_list_sources_ms: number;
  };
}

/** Wall time of `work`, in ms. */
async function wall(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return round(performance.now() - started);
}

/** Starts the service on `dataDir` (PORT=0), waits until its `GET /health` answers 200, and stops it; resolves with the wall time to the 200. */
async function startToHealth(dataDir: string, key: string, fromSources: boolean): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, [path.join(ROOT, "bin", "start.cjs")], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: "0",
      BROWSERFN_DATA_DIR: dataDir,
      BROWSERFN_BOOTSTRAP_KEY: key,
      BROWSERFN_REQUEST_LOG: "0",
      ...(fromSources ? { BROWSERFN_FROM_SOURCES: "1" } : {}),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let output = "";
      const read = (chunk: Buffer) => {
        output += chunk;
        const found = /serving (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
        if (found) resolve(found);
      };
      child.stdout.on("data", read);
      child.stderr.on("data", read);
      child.once("exit", () => reject(new Error(`the service exited before serving: ${output}`)));
    });
    const health = await fetch(`${url}/health`);
    if (health.status !== 200) throw new Error(`GET /health: ${health.status}`);
    return round(performance.now() - started);
  } finally {
    child.kill("SIGTERM");
    await exited;
  }
}

/** The service running for the CLI's figures, on its own data dir. */
async function runningService(dataDir: string, key: string): Promise<{ url: string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [path.join(ROOT, "bin", "start.cjs")], {
    cwd: ROOT,
    env: { ...process.env, PORT: "0", BROWSERFN_DATA_DIR: dataDir, BROWSERFN_BOOTSTRAP_KEY: key, BROWSERFN_REQUEST_LOG: "0" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk;
      const found = /serving (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
      if (found) resolve(found);
    });
    child.once("exit", () => reject(new Error(`the service exited before serving: ${output}`)));
  });
  return {
    url,
    stop: async () => {
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** `runs` rounds of each figure, side by side with `node -e 0`. */
export async function measureStartup(runs: number): Promise<StartupFigures> {
  const dir = await mkdtemp(path.join(tmpdir(), "browserfn-bench-start-"));
  const key = generateApiKey();
  const dataDir = path.join(dir, "data");
  const node0: number[] = [];
  const start = { bundle: [] as number[], sources: [] as number[] };
  const cli = { bundle: [] as number[], sources: [] as number[] };
  try {
    // The first start makes the data dir (tables, key, sandbox check); the timed ones are second starts.
    await startToHealth(dataDir, key, false);
    for (let i = 0; i < runs; i++) {
      node0.push(await wall(() => run(process.execPath, ["-e", "0"])));
      start.bundle.push(await startToHealth(dataDir, key, false));
      start.sources.push(await startToHealth(dataDir, key, true));
    }
    const service = await runningService(path.join(dir, "cli-data"), key);
    try {
      const env = { ...process.env, BROWSERFN_URL: service.url, BROWSERFN_API_KEY: key, XDG_CONFIG_HOME: dir };
      const list = (fromSources: boolean) => run(BIN, ["list", "--json"], { env: { ...env, ...(fromSources ? { BROWSERFN_FROM_SOURCES: "1" } : {}) } });
      // The first of each loads what the later ones find in the OS's file cache.
      await list(false);
      await list(true);
      for (let i = 0; i < runs; i++) {
        node0.push(await wall(() => run(process.execPath, ["-e", "0"])));
        cli.bundle.push(await wall(() => list(false)));
        cli.sources.push(await wall(() => list(true)));
      }
    } finally {
      await service.stop();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const p50 = (values: number[]) => summary(values).p50;
  return {
    runs,
    node_e_0_ms: node0,
    service_start_to_health_ms: start,
    cli_list_json_ms: cli,
    p50: {
      node_e_0_ms: p50(node0),
      service_start_bundle_ms: p50(start.bundle),
      service_start_sources_ms: p50(start.sources),
      cli_list_bundle_ms: p50(cli.bundle),
      cli_list_sources_ms: p50(cli.sources),
    },
  };
}

/** The figures as lines of a table, each run side by side (printed by `npm run bench` before its JSON). */
export function startupTable(figures: StartupFigures): string {
  const rows: [string, number[]][] = [
    ["node -e 0", figures.node_e_0_ms],
    ["start to GET /health 200, bundle (npm start)", figures.service_start_to_health_ms.bundle],
    ["start to GET /health 200, sources through tsx", figures.service_start_to_health_ms.sources],
    ["browserfn list --json, bundle (the bin)", figures.cli_list_json_ms.bundle],
    ["browserfn list --json, sources through tsx", figures.cli_list_json_ms.sources],
  ];
  return rows.map(([name, values]) => `${name.padEnd(48)} ${values.map((ms) => `${Math.round(ms)}`.padStart(6)).join(" ")}  ms`).join("\n");
}

/** `npm run bench:startup`: these figures alone (BENCH_START_RUNS rounds, default 5). */
if (require.main === module) {
  measureStartup(Number(process.env.BENCH_START_RUNS ?? 5)).then(
    (figures) => {
      console.log(startupTable(figures));
      console.log(JSON.stringify(figures, null, 2));
    },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
