import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { generateApiKey } from "../lambdas/identity/apiKeys";
import { startLocalService } from "../lambdas/local/localService";
import { startChildService } from "../test/helpers/childService";
import { testConfig } from "../test/helpers/localService";

export interface BenchService {
  url: string;
  key: string;
  close(): Promise<void>;
}

/** The service's settings for the bench: the test pool sizes, no rate limit, no request log. */
const SETTINGS = { workers: { perFunction: 2, total: 4, idleSeconds: 60 }, rateLimit: { perSecond: 0, burst: 1 } };

/**
 * The service under measurement. `process` (the default): `bin/local.ts` in a process of its
 * own, as `npm start` runs it, so the bench's own HTTP client and the service's work behind
 * each answer (metering, giving the lease back) do not share an event loop. `inline`: the
 * service in the bench process (how results before 2026-11-22 were measured).
 */
export async function startBenchService(mode: "process" | "inline"): Promise<BenchService> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "browserfn-bench-"));
  const key = generateApiKey();
  if (mode === "inline") {
    const service = await startLocalService(testConfig(dataDir, { bootstrapKey: key, ...SETTINGS }), { errorLog: console.error });
    return {
      url: service.url,
      key,
      close: async () => {
        await service.close();
        await rm(dataDir, { recursive: true, force: true });
      },
    };
  }
  const child = await startChildService(dataDir, key, {
    BROWSERFN_RATE_LIMIT_PER_SECOND: "0",
    BROWSERFN_MAX_WORKERS: String(SETTINGS.workers.total),
    BROWSERFN_MAX_WORKERS_PER_FUNCTION: String(SETTINGS.workers.perFunction),
    // Its pages are served on 127.0.0.1.
    BROWSERFN_ALLOW_LOCAL_NETWORK: "true",
  });
  return {
    url: child.url,
    key,
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
