import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { DEFAULT_PLANS } from "../../lambdas/config/plans";
import { generateApiKey } from "../../lambdas/identity/apiKeys";
import { startChildService } from "../helpers/childService";
import { requestJson } from "../helpers/http";
import { startTestService, type TestService } from "../helpers/localService";

// A batch's runs that had not started when the service stopped (cleanly or killed) are not
// lost: they stay queued and the next start runs them, in the order of the items.

/**
 * One run at a time, so a batch of five is mostly waiting when the service stops; a queue of
 * four, which the batch fills: a restart that counted a waiting run twice would find it full.
 */
const plans = { ...DEFAULT_PLANS, free: { ...DEFAULT_PLANS.free!, concurrency: 1, max_queued: 4 } };
const SLOW = "export default async function run({ n }: { n: number }) { await new Promise((r) => setTimeout(r, 400)); return { n }; }";

interface Batch {
  total: number;
  counts: Record<string, number>;
  finished_at: string | null;
}

async function untilFinished(call: TestService["call"], batchId: string): Promise<Batch> {
  for (let i = 0; i < 300; i++) {
    const batch = (await call("GET", `/batches/${batchId}`)).body as Batch;
    if (batch.finished_at !== null) return batch;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`batch ${batchId} did not finish`);
}

async function expectResumed(t: TestService, token: string, batchId: string, runIds: string[]): Promise<void> {
  const call: TestService["call"] = (method, urlPath, options = {}) => t.call(method, urlPath, { ...options, token });
  const batch = await untilFinished(call, batchId);
  expect(batch.total).toBe(5);
  const runs = await Promise.all(runIds.map(async (runId) => (await call("GET", `/runs/${runId}`)).body as { status: string; result: unknown; error: { code: string } | null }));
  // The one that was running ended with the stop; none is lost; every other one ran after the restart.
  expect(runs.map((run) => run.status).filter((status) => status !== "succeeded")).toEqual(runs.filter((run) => run.error?.code === "function_crashed").map(() => "failed"));
  expect(runs.filter((run) => run.status === "succeeded").length).toBeGreaterThanOrEqual(3);
  runs.forEach((run, n) => {
    if (run.status === "succeeded") expect(run.result).toEqual({ n });
  });
  expect(batch.counts.succeeded! + batch.counts.failed!).toBe(5);
}

describe("a batch across a restart", () => {
  it("keeps its runs not yet started queued through a clean stop, and runs them at the next start", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "browserfn-batch-restart-"));
    const adminKey = generateApiKey();
    const config = { plans };
    let t = await startTestService({ dataDir, adminKey, config });
    try {
      const token = await t.newAccount("one-at-a-time", "free");
      await t.deploy("slow", SLOW, {}, token);
      const answer = await t.call("POST", "/functions/slow/batch", { token, body: { items: Array.from({ length: 5 }, (_, n) => ({ n })) } });
      expect(answer.status).toBe(202);
      const { batch_id, run_ids } = answer.body as { batch_id: string; run_ids: string[] };
      await new Promise((resolve) => setTimeout(resolve, 200));
      await t.stop();
      t = await startTestService({ dataDir, adminKey, config });
      await expectResumed(t, token, batch_id, run_ids);
    } finally {
      await t.destroy();
    }
  }, 60_000);

  it("keeps them through a SIGKILL of the service too", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "browserfn-batch-kill-"));
    const key = generateApiKey();
    const child = await startChildService(dataDir, key, { BROWSERFN_PLANS: JSON.stringify(plans) });
    try {
      const account = await requestJson(child.url, "POST", "/api-keys", { token: key, body: { account: "one-at-a-time", plan: "free" } });
      const token = String(account.body.key);
      const created = await requestJson(child.url, "POST", "/functions", { token, body: { name: "slow", code: SLOW } });
      expect(created.status).toBe(201);
      const answer = await requestJson(child.url, "POST", "/functions/slow/batch", { token, body: { items: Array.from({ length: 5 }, (_, n) => ({ n })) } });
      expect(answer.status).toBe(202);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await child.kill();
      const t = await startTestService({ dataDir, adminKey: key, config: { plans } });
      try {
        await expectResumed(t, token, answer.body.batch_id, answer.body.run_ids);
      } finally {
        await t.destroy();
      }
    } finally {
      await child.kill();
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});
