import { NO_PARAMS_FN } from "../helpers/code";
import { expectError } from "../helpers/http";
import { startTestService } from "../helpers/localService";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhookReceiver";

const FAST = { retryBaseMs: 20, pollMs: 50 };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("webhook targets on the host's own network (SSRF)", () => {
  let receiver: WebhookReceiver;
  beforeEach(async () => {
    receiver = await startWebhookReceiver();
  });
  afterEach(async () => {
    await receiver.close();
  });

  it("refuses loopback and private targets written as addresses at create and PATCH when the local network is not allowed", async () => {
    const t = await startTestService({ config: { allowLocalNetwork: false, webhooks: FAST } });
    try {
      for (const url of [receiver.url, "http://localhost:8080/", "http://[::1]/", "http://10.1.2.3/", "http://169.254.169.254/latest", "http://[::ffff:127.0.0.1]/", "http://0x7f.1/", "http://100.64.0.1/"]) {
        const answer = await t.call("POST", "/functions", { body: { name: "ssrf", code: NO_PARAMS_FN, webhooks: [{ url }] } });
        const error = expectError(answer, 400, "invalid_request");
        expect(error.details.issues).toEqual([expect.objectContaining({ field: "webhooks.0.url" })]);
        expect(error.message).toContain("BROWSERFN_ALLOW_LOCAL_NETWORK");
      }
      await t.deploy("ssrf", NO_PARAMS_FN);
      expectError(await t.call("PATCH", "/functions/ssrf", { body: { webhooks: [{ url: "http://192.168.1.1/" }] } }), 400, "invalid_request");
      // A public address is fine (nothing is sent to it here).
      expect((await t.call("PATCH", "/functions/ssrf", { body: { webhooks: [{ url: "https://93.184.215.14/hook" }] } })).status).toBe(200);
    } finally {
      await t.destroy();
    }
  });

  it("checks the target again when it sends: a loopback target is refused and recorded unless the local network is allowed", async () => {
    // Made while the local network was allowed, sent after a restart that no longer allows it.
    const allowed = await startTestService({ config: { allowLocalNetwork: true, webhooks: FAST } });
    await allowed.deploy("hooked", NO_PARAMS_FN, { webhooks: [{ url: receiver.url }] });
    await allowed.stop();
    const t = await startTestService({ dataDir: allowed.dataDir, adminKey: allowed.adminKey, config: { allowLocalNetwork: false, webhooks: FAST } });
    try {
      expect((await t.call("POST", "/functions/hooked")).status).toBe(200);
      let items: Record<string, unknown>[] = [];
      for (let i = 0; i < 100 && !(items[0]?.attempts as number); i++) {
        await sleep(50);
        items = (await t.call("GET", "/functions/hooked/deliveries")).body.items;
      }
      expect(items[0]).toMatchObject({ status: "pending", attempts: expect.any(Number), last_status_code: null });
      expect(String(items[0]?.last_error)).toMatch(/^refused: 127\.0\.0\.1 resolves to a non-public address .*BROWSERFN_ALLOW_LOCAL_NETWORK=true/);
      await sleep(200);
      expect(receiver.received).toHaveLength(0);
    } finally {
      await t.stop();
    }
    // Allowed again: the same delivery (still pending) goes out.
    const again = await startTestService({ dataDir: allowed.dataDir, adminKey: allowed.adminKey, config: { allowLocalNetwork: true, webhooks: FAST } });
    try {
      const [request] = await receiver.waitFor(1);
      expect(JSON.parse(String(request?.body)).type).toBe("run.succeeded");
    } finally {
      await again.destroy();
    }
  });
});
