import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { readLocalConfig } from "../lambdas/config/localConfig";
import { generateApiKey } from "../lambdas/identity/apiKeys";
import { startLocalService } from "../lambdas/local/localService";
import { describeSandbox } from "../lambdas/runtime/local/sandbox/sandbox";
import { startChildService } from "../test/helpers/childService";
import { testConfig } from "../test/helpers/localService";

export interface BenchService {
  url: string;
  key: string;
  /** The service's process (null inline: it is the bench's own). */
  pid: number | null;
  /** The sandbox it chose (`namespaces` or `process`) and its start-up line. */
  sandbox: { mode: string; line: string };
  /** The worker caps it runs with. */
  workers: { perFunction: number; total: number };
  close(): Promise<void>;
}

/**
 * The worker caps: `defaults`, those of `npm start` (BROWSERFN_MAX_WORKERS and
 * BROWSERFN_MAX_WORKERS_PER_FUNCTION as set, else two per core); `tests`, those of the tests
 * (2 per function, 4 in all), with which results before issue #17 were measured.
 */
export type WorkerCaps = "defaults" | "tests";

/**
 * What the bench sets beside `npm start`'s defaults: no rate limit (the throughput phases
 * would hit it), and automations may reach 127.0.0.1, where the bench serves its page.
 */
function serviceEnv(caps: WorkerCaps): Record<string, string> {
  return {
    BROWSERFN_RATE_LIMIT_PER_SECOND: "0",
    BROWSERFN_ALLOW_LOCAL_NETWORK: "true",
    ...(caps === "tests" ? { BROWSERFN_MAX_WORKERS: "4", BROWSERFN_MAX_WORKERS_PER_FUNCTION: "2" } : {}),
  };
}

/**
 * The service under measurement. `process` (the default): `bin/local.ts` in a process of its
 * own, as `npm start` runs it, so the bench's own HTTP client and the service's work behind
 * each answer (metering, giving the lease back) do not share an event loop. `inline`: the
 * service in the bench process (how results before 2026-11-22 were measured), with the same
 * settings read from the same environment.
 */
export async function startBenchService(mode: "process" | "inline", caps: WorkerCaps): Promise<BenchService> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "browserfn-bench-"));
  const key = generateApiKey();
  const env = serviceEnv(caps);
  // As the service reads it (the child gets the bench's environment too), for the report.
  const config = readLocalConfig({ ...process.env, ...env, BROWSERFN_DATA_DIR: dataDir, BROWSERFN_BOOTSTRAP_KEY: key });
  const workers = { perFunction: config.workers.perFunction, total: config.workers.total };
  if (mode === "inline") {
    const settings = { bootstrapKey: key, workers: config.workers, rateLimit: config.rateLimit, sandbox: config.sandbox };
    const service = await startLocalService(testConfig(dataDir, settings), { errorLog: console.error });
    return {
      url: service.url,
      key,
      pid: null,
      sandbox: { mode: service.sandbox.mode, line: describeSandbox(service.sandbox) },
      workers,
      close: async () => {
        await service.close();
        await rm(dataDir, { recursive: true, force: true });
      },
    };
  }
  const child = await startChildService(dataDir, key, env);
  const line = /^Sandbox: .*$/m.exec(child.output())?.[0];
  const sandboxMode = line ? /^Sandbox: (\w+)/.exec(line)?.[1] : undefined;
  if (!line || !sandboxMode || child.child.pid === undefined) {
    await child.stop();
    throw new Error(`no sandbox line in the service's start-up output: ${child.output()}`);
  }
  return {
    url: child.url,
    key,
    pid: child.child.pid,
    sandbox: { mode: sandboxMode, line },
    workers,
    close: async () => {
      await child.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The HTTP floor of an invocation: a Node HTTP server in a process of its own that answers
 * every request with a small JSON body at once. The same client calls it, side by side with
 * the service, so the difference is what the service itself adds.
 */
export async function startHttpFloor(): Promise<{ url: string; close(): Promise<void> }> {
  const script = `require("node:http").createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end('{"n":1}'));
  }).listen(0, "127.0.0.1", function () { process.send(this.address().port); });`;
  const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "ignore", "inherit", "ipc"] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once("message", (message) => resolve(Number(message)));
    child.once("exit", (code) => reject(new Error(`the HTTP floor server exited (${code})`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
  };
}
