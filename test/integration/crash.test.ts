import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { generateApiKey } from "../../lambdas/identity/apiKeys";
import { requestJson } from "../helpers/http";
import { startChildService } from "../helpers/childService";
import { startTestService } from "../helpers/localService";
import { expectNoProcessesWith, processesWith } from "../helpers/processes";


describe("a crash of the service", () => {
  it("leaves no run dangling and no process behind: the next start settles both", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "browserfn-crash-"));
    const key = generateApiKey();
    // One process (no tsx wrapper), so SIGKILL hits the service itself.
    const child = await startChildService(dataDir, key);
    try {
      const { url } = child;
      const code = "export default async () => { await new Promise((r) => setTimeout(r, 60000)); return 1; }";
      await requestJson(url, "POST", "/functions", { token: key, body: { name: "long", code } });
      const accepted = await requestJson(url, "POST", "/functions/long", { token: key, headers: { prefer: "respond-async" } });
      expect(accepted.status).toBe(202);
      // Its worker starts cold (seconds on a machine busy with other suites).
      for (let i = 0; i < 400; i++) {
        const run = await requestJson(url, "GET", `/runs/${accepted.body.run_id}`, { token: key });
        if (run.body.status === "running") break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const runtimeDir = (await readFile(path.join(dataDir, "runtime-dir"), "utf8")).trim();
      expect(processesWith(runtimeDir).length).toBeGreaterThan(0);
      await child.kill();

      const t = await startTestService({ dataDir, adminKey: key });
      try {
        await expectNoProcessesWith(runtimeDir);
        const run = await t.call("GET", `/runs/${accepted.body.run_id}`);
        expect(run.body).toMatchObject({ status: "failed", error: { code: "function_crashed" } });
        expect(run.body.finished_at).not.toBeNull();
        const metrics = await t.call("GET", "/functions/long/metrics");
        expect(metrics.body).toMatchObject({ total_calls: 1, failed_calls: 1 });
      } finally {
        await t.destroy();
      }
    } finally {
      await child.kill();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
