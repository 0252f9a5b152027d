import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { generateApiKey } from "../../lambdas/identity/apiKeys";
import { type ChildService, startChildService } from "../helpers/childService";
import { requestJson } from "../helpers/http";

// SIGTERM with runs in flight: the service stops taking requests, lets its runs finish within
// BROWSERFN_SHUTDOWN_GRACE_SECONDS (their callers get their answers, their ends are recorded),
// then exits 0. Before, SIGTERM killed every busy worker at once: the runs failed.

const WAITS_FN = `export default async function run(ms: number) {
  console.log("started");
  await new Promise((resolve) => setTimeout(resolve, ms));
  console.log("finished");
  return { slept: ms };
}
`;

describe("SIGTERM", () => {
  const key = generateApiKey();
  let dataDir: string;
  let service: ChildService | undefined;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "browserfn-shutdown-"));
  });
  afterAll(async () => {
    await service?.kill();
    await rm(dataDir, { recursive: true, force: true });
  });

  const call = (method: string, urlPath: string, options: { body?: unknown; headers?: Record<string, string> } = {}) =>
    requestJson(String(service?.url), method, urlPath, { ...options, token: key });

  /** Waits until `count` runs of `name` are running (a worker's cold start takes seconds on a machine busy with other suites). */
  async function running(name: string, count: number): Promise<void> {
    const list = async () => ((await call("GET", `/runs?function=${name}&status=running`)).body as { items: unknown[] }).items;
    for (const deadline = Date.now() + 20_000; (await list()).length < count && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await list()).toHaveLength(count);
  }

  it("lets runs in flight finish within the grace, answers their callers, and refuses new requests", async () => {
    service = await startChildService(dataDir, key, { BROWSERFN_SHUTDOWN_GRACE_SECONDS: "10" });
    expect((await call("POST", "/functions", { body: { name: "waits", code: WAITS_FN } })).status).toBe(201);
    expect((await call("POST", "/functions/waits", { body: { ms: 1 } })).status).toBe(200); // warm

    const sync = call("POST", "/functions/waits", { body: { ms: 3000 } });
    const accepted = await call("POST", "/functions/waits", { body: { ms: 3000 }, headers: { prefer: "respond-async" } });
    expect(accepted.status).toBe(202);
    await running("waits", 2);
    const stopped = Date.now();
    const exited = service.stop();
    await new Promise((resolve) => setTimeout(resolve, 300));

    // New requests are refused while the runs finish.
    await expect(fetch(`${service.url}/health`)).rejects.toThrow();
    const answer = await sync;
    expect([answer.status, answer.body]).toEqual([200, { slept: 3000 }]);
    expect(await exited).toBe(0);
    const took = Date.now() - stopped;
    expect(took).toBeGreaterThan(1500);
    expect(took).toBeLessThan(10_000);
    expect(service.output()).not.toMatch(/failed inside the service|recording its end failed/);

    // After a restart both runs are recorded as they ended: succeeded, with their logs.
    service = await startChildService(dataDir, key);
    for (const runId of [String(answer.headers.get("x-run-id")), String(accepted.body.run_id)]) {
      const run = (await call("GET", `/runs/${runId}`)).body;
      expect(run).toMatchObject({ status: "succeeded", result: { slept: 3000 } });
      expect(run.logs).toContain("finished");
    }
    expect(await service.stop()).toBe(0);
    service = undefined;
  }, 120_000);

  it("stops what still runs once the grace is over", async () => {
    service = await startChildService(dataDir, key, { BROWSERFN_SHUTDOWN_GRACE_SECONDS: "1" });
    const accepted = await call("POST", "/functions/waits", { body: { ms: 60_000 }, headers: { prefer: "respond-async" } });
    expect(accepted.status).toBe(202);
    await running("waits", 1);
    const stopped = Date.now();
    expect(await service.stop()).toBe(0);
    expect(Date.now() - stopped).toBeLessThan(8_000);
    service = await startChildService(dataDir, key);
    expect((await call("GET", `/runs/${String(accepted.body.run_id)}`)).body).toMatchObject({ status: "failed", error: { code: "function_crashed" } });
    expect(await service.stop()).toBe(0);
    service = undefined;
  }, 120_000);
});
