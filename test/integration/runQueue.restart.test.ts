/**
 * Queued runs live in the store (issue #22): they survive a SIGKILL and a SIGTERM of the real
 * service (`npm start` in a child process) and start after the next start on the same data dir.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { DEFAULT_PLANS } from "../../lambdas/config/plans";
import { generateApiKey } from "../../lambdas/identity/apiKeys";
import { type ChildService, startChildService } from "../helpers/childService";
import { requestJson } from "../helpers/http";

// The bootstrap key's account is on `pro`: here it runs one run at a time.
const plans = { ...DEFAULT_PLANS, pro: { ...DEFAULT_PLANS.pro, concurrency: 1 } } as Record<string, unknown>;
const env = { BROWSERFN_PLANS: JSON.stringify(plans), BROWSERFN_SYNC_WAIT_SECONDS: "2" };
const STAMPED = "export default async (ms: number = 300) => { const entered = Date.now(); await new Promise((r) => setTimeout(r, ms)); return { entered }; }";
const async = { prefer: "respond-async" };

let dataDir: string;
let service: ChildService | undefined;
const key = generateApiKey();

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), "browserfn-queue-restart-"));
});
afterEach(async () => {
  await service?.kill();
  service = undefined;
  await rm(dataDir, { recursive: true, force: true });
});

const call = (method: string, urlPath: string, options: { body?: unknown; headers?: Record<string, string> } = {}) =>
  requestJson(service!.url, method, urlPath, { token: key, ...options });

async function finished(runId: string) {
  for (let i = 0; i < 600; i++) {
    const run = (await call("GET", `/runs/${runId}`)).body;
    if (run.finished_at) return run;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`run ${runId} did not end`);
}

async function queueBehindALongRun(): Promise<{ running: string; queued: string[] }> {
  service = await startChildService(dataDir, key, env);
  expect((await call("POST", "/functions", { body: { name: "stamped", code: STAMPED } })).status).toBe(201);
  const long = await call("POST", "/functions/stamped", { body: { ms: 60_000 }, headers: async });
  expect(long.status).toBe(202);
  const queued: string[] = [];
  for (let i = 0; i < 3; i++) {
    const answer = await call("POST", "/functions/stamped", { body: { ms: 50 }, headers: async });
    expect([answer.status, answer.body.status]).toEqual([202, "queued"]);
    queued.push(String(answer.body.run_id));
  }
  // The long run is in the automation before the service stops.
  for (let i = 0; i < 200 && (await call("GET", `/runs/${long.body.run_id}`)).body.status !== "running"; i++) await new Promise((r) => setTimeout(r, 50));
  return { running: String(long.body.run_id), queued };
}

describe("queued runs across a restart of the service", () => {
  for (const signal of ["SIGKILL", "SIGTERM"] as const) {
    it(`start after the next start when the service got ${signal}; the run cut off ends crashed`, async () => {
      const { running, queued } = await queueBehindALongRun();
      if (signal === "SIGKILL") await service!.kill();
      else await service!.stop();
      service = await startChildService(dataDir, key, env);
      const cut = await finished(running);
      expect(cut).toMatchObject({ status: "failed", error: { code: "function_crashed" } });
      const runs = await Promise.all(queued.map(finished));
      expect(runs.map((run) => run.status)).toEqual(["succeeded", "succeeded", "succeeded"]);
      // Oldest first, one at a time.
      const entered = runs.map((run) => run.result.entered as number);
      expect([...entered].sort((a, b) => a - b)).toEqual(entered);
      // Each counted once: the four invocations, none refunded or counted again.
      const usage = (await call("GET", "/usage")).body;
      expect(usage.remaining.invocations).toBe(DEFAULT_PLANS.pro!.invocations_per_month - 4);
    }, 120_000);
  }
});
