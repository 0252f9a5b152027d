import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { generateApiKey } from "../../lambdas/identity/apiKeys";
import { NO_PARAMS_FN } from "../helpers/code";
import { startChildService } from "../helpers/childService";
import { requestJson } from "../helpers/http";
import { expectNoProcessesWith } from "../helpers/processes";
import { startWebhookReceiver, verifyStandardWebhook } from "../helpers/webhookReceiver";

/** Retries 300 ms after the first attempt; due deliveries looked for every 50 ms. */
const ENV = { BROWSERFN_ALLOW_LOCAL_NETWORK: "true", BROWSERFN_WEBHOOK_RETRY_BASE_MS: "300", BROWSERFN_WEBHOOK_POLL_MS: "50" };

describe("the webhook outbox under kill -9", () => {
  it("delivers a pending delivery after the service is killed and started again on the same data dir", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "browserfn-webhook-kill-"));
    const key = generateApiKey();
    const receiver = await startWebhookReceiver();
    receiver.fallback = 500;
    const runtimeDirs: string[] = [];
    try {
      const first = await startChildService(dataDir, key, ENV);
      runtimeDirs.push((await readFile(path.join(dataDir, "runtime-dir"), "utf8")).trim());
      let secret: string;
      let runId: string;
      try {
        const call = (method: string, urlPath: string, body?: unknown) => requestJson(first.url, method, urlPath, { token: key, body });
        const created = await call("POST", "/functions", { name: "hooked", code: NO_PARAMS_FN, webhooks: [{ url: receiver.url }] });
        expect(created.status).toBe(201);
        secret = created.body.webhook_secret;
        const invoked = await call("POST", "/functions/hooked");
        expect(invoked.status).toBe(200);
        runId = String(invoked.headers.get("x-run-id"));
        await receiver.waitFor(1);
        // Killed once the failed attempt is recorded (killed during it, the restart would send it again and count it once).
        for (let i = 0; i < 100; i++) {
          const items = (await call("GET", "/functions/hooked/deliveries")).body.items as { status: string; attempts: number }[];
          if (items[0]?.status === "pending" && items[0].attempts >= 1) break;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      } finally {
        // The first attempt got a 500: the delivery is pending, its next attempt due in 300 ms.
        await first.kill();
      }
      const failed = receiver.received.length;
      expect(receiver.received.every((request) => request.answered === 500)).toBe(true);
      receiver.fallback = 200;

      const second = await startChildService(dataDir, key, ENV);
      runtimeDirs.push((await readFile(path.join(dataDir, "runtime-dir"), "utf8")).trim());
      try {
        const requests = await receiver.waitFor(failed + 1);
        const delivered = requests[failed];
        if (!delivered) throw new Error("no delivery after the restart");
        expect(delivered.answered).toBe(200);
        expect(delivered.headers["webhook-id"]).toBe(requests[0]?.headers["webhook-id"]);
        expect(verifyStandardWebhook(secret, delivered)).toBe(true);
        expect(JSON.parse(delivered.body).data.run).toMatchObject({ run_id: runId, status: "succeeded" });
        let items: Record<string, unknown>[] = [];
        for (let i = 0; i < 100 && items[0]?.status !== "delivered"; i++) {
          items = (await requestJson(second.url, "GET", "/functions/hooked/deliveries", { token: key })).body.items;
          if (items[0]?.status !== "delivered") await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(items).toEqual([expect.objectContaining({ run_id: runId, status: "delivered", last_status_code: 200 })]);
        // Every attempt counts, but one the kill cut short (sent, its answer not yet recorded) may not.
        expect(items[0]?.attempts).toBeGreaterThanOrEqual(Math.max(2, failed));
        expect(items[0]?.attempts).toBeLessThanOrEqual(failed + 1);
      } finally {
        expect(await second.stop()).toBe(0);
      }
    } finally {
      await receiver.close();
      for (const dir of runtimeDirs) await expectNoProcessesWith(dir);
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
