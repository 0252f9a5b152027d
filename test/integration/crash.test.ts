import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { generateApiKey } from "../../lambdas/identity/apiKeys";
import { requestJson } from "../helpers/http";
import { startTestService } from "../helpers/localService";
import { expectNoProcessesWith, processesWith } from "../helpers/processes";

const ROOT = path.resolve(__dirname, "../..");

describe("a crash of the service", () => {
  it("leaves no run dangling and no process behind: the next start settles both", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "browserfn-crash-"));
    const key = generateApiKey();
    // One process (no tsx wrapper), so SIGKILL hits the service itself.
    const child = spawn(process.execPath, ["--import", "tsx", "bin/local.ts"], {
      cwd: ROOT,
      env: { ...process.env, PORT: "0", BROWSERFN_DATA_DIR: dataDir, BROWSERFN_BOOTSTRAP_KEY: key, BROWSERFN_REQUEST_LOG: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    try {
      let url: string | undefined;
      for (let i = 0; i < 400 && !url; i++) {
        url = /serving (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      if (!url) throw new Error(`the service did not start: ${output}`);
      const code = "export default async () => { await new Promise((r) => setTimeout(r, 60000)); return 1; }";
      await requestJson(url, "POST", "/functions", { token: key, body: { name: "long", code } });
      const accepted = await requestJson(url, "POST", "/functions/long", { token: key, headers: { prefer: "respond-async" } });
      expect(accepted.status).toBe(202);
      for (let i = 0; i < 100; i++) {
        const run = await requestJson(url, "GET", `/runs/${accepted.body.run_id}`, { token: key });
        if (run.body.status === "running") break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const runtimeDir = (await readFile(path.join(dataDir, "runtime-dir"), "utf8")).trim();
      expect(processesWith(runtimeDir).length).toBeGreaterThan(0);
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;

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
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
